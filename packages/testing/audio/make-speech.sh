#!/usr/bin/env bash
# packages/testing/audio/make-speech.sh — regenerate the spoken test audio from speech.txt
#
#   bash packages/testing/audio/make-speech.sh
#
# Debian's espeak-ng speaks speech.txt (American English voice, 160 words per minute) into a WAV,
# then Debian's ffmpeg encodes it the way the platform serves audio-only formats:
#   speech.webm  Opus in WebM, 24 kbps mono 48 kHz (itag 249/250/251 style)
#   speech.m4a   AAC-LC in MP4, mono 22.05 kHz, 32 kbps asked (ffmpeg lands near 34; itag 139/140
#                style), encoded from the decoded Opus rather than from espeak-ng's WAV
# Why through Opus: the AAC file is what the platform would serve after its own re-encoding, and
# a weaker recogniser heard espeak-ng's raw synthesis far worse than the same speech after Opus.
# The outputs are committed; rerun after changing speech.txt. espeak-ng's output is deterministic
# for one version; the encoders' may differ by a few bytes between ffmpeg versions.
set -euo pipefail
cd "$(dirname "$(realpath "${BASH_SOURCE[0]}")")"
command -v espeak-ng >/dev/null || { echo "make-speech.sh: espeak-ng not found (apt-get install espeak-ng)" >&2; exit 1; }
command -v ffmpeg >/dev/null || { echo "make-speech.sh: ffmpeg not found (apt-get install ffmpeg)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
espeak-ng -v en-us -s 160 -g 6 -f speech.txt -w "$tmp/speech.wav"
ffmpeg -v error -y -i "$tmp/speech.wav" -map_metadata -1 -ac 1 -ar 48000 -c:a libopus -b:a 24k \
  -fflags +bitexact speech.webm
ffmpeg -v error -y -i speech.webm -map_metadata -1 -ac 1 -ar 22050 -c:a aac -b:a 32k \
  -movflags +faststart -fflags +bitexact speech.m4a
for f in speech.m4a speech.webm; do
  printf '%s: %s bytes, %s s\n' "$f" "$(stat -c %s "$f")" \
    "$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$f")"
done
