/**
 * SYNTHETIC: a captionless video with spoken audio, for speech-to-text. Its player answer lists two
 * audio-only adaptive formats, itag 251 (Opus in WebM) and itag 140 (AAC in MP4), whose URLs point at
 * this fake's `/videoplayback`, serving packages/testing/audio/speech.{webm,m4a} (espeak-ng reading
 * speech.txt, 70 s; see make-speech.sh there). Like the platform:
 * - VISIONOS and the other non-WEB clients get plain `url`s (no PO token, no player JavaScript);
 *   WEB-family clients get a `signatureCipher` instead, which needs the player's JavaScript.
 * - `/videoplayback` serves ranges only, either the `range=START-END` query parameter (200 with
 *   those bytes) or a `Range: bytes=START-END` header (206 with Content-Range), of at most
 *   MAX_PIECE_BYTES; an unranged or larger request gets 403 (the platform throttles unranged
 *   downloads to a crawl; refusing them makes a client that forgets ranges fail loudly).
 * - `speechAudio` (an option of the fake) serves other files in place of the 70 s recording, e.g.
 *   a long one for the transcription benchmark; the player answer then tells their length.
 */
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const SPEECH_VIDEO_ID = 'synthSpeech';
/**
 * SYNTHETIC: the same speech as a made-for-kids video. Every logged-out client answers it UNPLAYABLE
 * except `IOS_PRODUCER` (yt-dlp 2026.11.23's `ios_producer`), which serves it with H.264 and mp4a
 * formats only: here itag 140, with a plain URL. No caption track.
 */
export const KIDS_AUDIO_VIDEO_ID = 'synthKidsAu';
/** The one client the made-for-kids speech video plays on. */
export const KIDS_AUDIO_CLIENT = 'IOS_PRODUCER';
/** How the other clients refuse it. */
export const MADE_FOR_KIDS_REFUSAL = {
  status: 'UNPLAYABLE',
  reason: 'Video unavailable',
  subreason: 'This video is made for kids and cannot be played while signed out here.',
} as const;
/** The formats each audio video lists (the made-for-kids one: mp4a only, as IOS_PRODUCER serves). */
const formatsOf = (videoId: string): readonly AudioFormat[] =>
  videoId === KIDS_AUDIO_VIDEO_ID ? SPEECH_FORMATS.filter((f) => f.itag === 140) : SPEECH_FORMATS;
/**
 * The same audio behind a video that lists an English caption track every client is refused: its
 * URL carries `exp=xpe` (a PO token) in every answer, the way the platform gates captions it will
 * not serve without one, so only the audio can be read.
 */
export const SPEECH_REFUSED_CAPTIONS_VIDEO_ID = 'synthSpkRef';
const AUDIO_VIDEO_IDS: readonly string[] = [
  SPEECH_VIDEO_ID,
  KIDS_AUDIO_VIDEO_ID,
  SPEECH_REFUSED_CAPTIONS_VIDEO_ID,
];
/** Whole seconds, as `videoDetails.lengthSeconds` says; the audio is 70.25 s. */
export const SPEECH_LENGTH_SECONDS = 70;
const APPROX_DURATION_MS = '70253';
/** The platform's advice: pieces of at most 10 MB. */
export const MAX_PIECE_BYTES = 10 * 1024 * 1024;

interface AudioFormat {
  itag: number;
  file: string;
  mimeType: string;
  bitrate: number;
  averageBitrate: number;
  audioSampleRate: string;
  audioQuality: string;
}

export const SPEECH_FORMATS: readonly AudioFormat[] = [
  {
    itag: 251,
    file: 'speech.webm',
    mimeType: 'audio/webm; codecs="opus"',
    bitrate: 30_000,
    averageBitrate: 25_000,
    audioSampleRate: '48000',
    audioQuality: 'AUDIO_QUALITY_LOW',
  },
  {
    itag: 140,
    file: 'speech.m4a',
    mimeType: 'audio/mp4; codecs="mp4a.40.2"',
    bitrate: 40_000,
    averageBitrate: 33_600,
    audioSampleRate: '22050',
    audioQuality: 'AUDIO_QUALITY_LOW',
  },
];

/** Other audio files for the speech video: Opus in WebM, AAC in MP4, and their length. */
export interface SpeechAudio {
  webm: string;
  m4a: string;
  durationMs: number;
}

function audioPath(file: string, audio?: SpeechAudio): string {
  if (audio) return file.endsWith('.webm') ? audio.webm : audio.m4a;
  return fileURLToPath(new URL(`../../audio/${file}`, import.meta.url));
}

const WEB_FAMILY = /^(WEB|MWEB|WEB_EMBEDDED_PLAYER|WEB_CREATOR|WEB_REMIX|TVHTML5)/;

/** A caption list whose one English track is gated by a PO token for every client. */
function refusedCaptions(videoId: string): Record<string, unknown> {
  const baseUrl = `https://www.youtube.com/api/timedtext?v=${videoId}&ei=fake&caps=asr&opi=1&exp=xpe&xoaf=5&hl=en&ip=0.0.0.0&ipbits=0&expire=9999999999&sparams=ip,ipbits,expire,v,ei,caps,opi,exp,xoaf&signature=FAKE&key=yt8&lang=en`;
  return {
    playerCaptionsTracklistRenderer: {
      captionTracks: [
        {
          baseUrl,
          name: { runs: [{ text: 'English' }] },
          vssId: '.en',
          languageCode: 'en',
          isTranslatable: true,
        },
      ],
      audioTracks: [{ captionTrackIndices: [0], defaultCaptionTrackIndex: 0, hasDefaultTrack: true }],
      translationLanguages: [],
      defaultAudioTrackIndex: 0,
    },
  };
}

/**
 * The player answer of a speech video for CLIENT (SPEECH_VIDEO_ID, its made-for-kids copy
 * KIDS_AUDIO_VIDEO_ID, or SPEECH_REFUSED_CAPTIONS_VIDEO_ID with refused captions), with stream URLs
 * on ORIGIN (`http://host:port`).
 */
export function speechPlayer(
  origin: string,
  client: string | undefined,
  audio?: SpeechAudio,
  videoId = SPEECH_VIDEO_ID,
): Record<string, unknown> {
  const web = WEB_FAMILY.test(client ?? '');
  const durationMs = audio ? String(Math.round(audio.durationMs)) : APPROX_DURATION_MS;
  const lengthSeconds = audio ? Math.floor(audio.durationMs / 1000) : SPEECH_LENGTH_SECONDS;
  const kids = videoId === KIDS_AUDIO_VIDEO_ID;
  const adaptiveFormats = formatsOf(videoId).map((f) => {
    const size = statSync(audioPath(f.file, audio)).size;
    const url = `${origin}/videoplayback?id=${videoId}&itag=${f.itag}&source=youtube&mime=${encodeURIComponent(f.mimeType.split(';')[0]!)}&clen=${size}&dur=${(Number(durationMs) / 1000).toFixed(3)}`;
    return {
      itag: f.itag,
      ...(web ? { signatureCipher: `s=FAKESIGNATURE&sp=sig&url=${encodeURIComponent(url)}` } : { url }),
      mimeType: f.mimeType,
      bitrate: f.bitrate,
      averageBitrate: f.averageBitrate,
      contentLength: String(size),
      approxDurationMs: durationMs,
      lastModified: '1764806400000000',
      quality: 'tiny',
      projectionType: 'RECTANGULAR',
      highReplication: true,
      audioQuality: f.audioQuality,
      audioSampleRate: f.audioSampleRate,
      audioChannels: 1,
      loudnessDb: -12.5,
    };
  });
  return {
    _synthetic: 'SYNTHETIC captionless video with spoken audio (packages/testing/audio), 2026 shapes',
    responseContext: { serviceTrackingParams: [] },
    playabilityStatus: { status: 'OK', playableInEmbed: true },
    streamingData: { expiresInSeconds: '21540', adaptiveFormats },
    ...(videoId === SPEECH_REFUSED_CAPTIONS_VIDEO_ID ? { captions: refusedCaptions(videoId) } : {}),
    videoDetails: {
      videoId,
      title: kids ? 'Counting to ten for kids' : 'Counting to ten: a spoken test recording',
      lengthSeconds: String(lengthSeconds),
      channelId: 'UCsubxSyntheticChannel0A',
      shortDescription: 'Synthetic speech without captions.',
      isOwnerViewing: false,
      isCrawlable: true,
      allowRatings: true,
      viewCount: '1234',
      author: 'Subx Synthetic',
      isPrivate: false,
      isUnpluggedCorpus: false,
      isLiveContent: false,
    },
    trackingParams: 'fake',
  };
}

export interface PlaybackAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const cache = new Map<string, Buffer>();

function refuse(status: number, message: string): PlaybackAnswer {
  return { status, headers: { 'content-type': 'text/plain' }, body: Buffer.from(message) };
}

/** GET /videoplayback?id=&itag=[&range=A-B], optionally with a Range header. */
export function videoplayback(
  url: URL,
  rangeHeader: string | undefined,
  audio?: SpeechAudio,
): PlaybackAnswer {
  const itag = Number(url.searchParams.get('itag'));
  const id = url.searchParams.get('id') ?? '';
  const format = formatsOf(id).find((f) => f.itag === itag);
  if (!AUDIO_VIDEO_IDS.includes(id) || !format) return refuse(404, 'no such stream');
  const path = audioPath(format.file, audio);
  let data = cache.get(path);
  if (!data) {
    data = readFileSync(path);
    cache.set(path, data);
  }
  const query = url.searchParams.get('range');
  const header = rangeHeader && /^bytes=(\d+)-(\d*)$/.exec(rangeHeader.trim());
  const raw = query ?? (header ? `${header[1]}-${header[2]}` : undefined);
  if (raw === undefined)
    return refuse(403, 'unranged download refused: ask for ranges of at most 10 MB (range= or Range:)');
  const m = /^(\d+)-(\d*)$/.exec(raw);
  if (!m) return refuse(416, 'bad range');
  const start = Number(m[1]);
  // the asked size counts, not what is left of the file (an open end asks for the rest)
  if ((m[2] ? Number(m[2]) : data.length - 1) - start + 1 > MAX_PIECE_BYTES)
    return refuse(403, 'range too large: at most 10 MB a piece');
  const end = Math.min(m[2] ? Number(m[2]) : data.length - 1, data.length - 1);
  if (start >= data.length || end < start) {
    return { status: 416, headers: { 'content-range': `bytes */${data.length}` }, body: Buffer.alloc(0) };
  }

  const body = data.subarray(start, end + 1);
  const type = format.mimeType.split(';')[0]!;
  if (query !== null) return { status: 200, headers: { 'content-type': type }, body };
  return {
    status: 206,
    headers: {
      'content-type': type,
      'content-range': `bytes ${start}-${end}/${data.length}`,
      'accept-ranges': 'bytes',
    },
    body,
  };
}
