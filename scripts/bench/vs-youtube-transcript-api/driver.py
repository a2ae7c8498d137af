"""Runs youtube-transcript-api against the fake platform for the subx benchmark.

Every request the library makes to https://www.youtube.com is sent to the fake instead (a requests
Session that rewrites the origin), so the library runs unmodified: watch page, ANDROID /player,
timedtext. Prints one JSON line per fetch: {"video", "ms", "segments"} or {"video", "error"}.

usage: python driver.py FAKE_URL RUNS VIDEO:LANG [VIDEO:LANG ...]
"""
import json
import sys
import time

import requests
from youtube_transcript_api import YouTubeTranscriptApi

PLATFORM = "https://www.youtube.com"


class ToFake(requests.Session):
    def __init__(self, fake_url):
        super().__init__()
        self.fake_url = fake_url.rstrip("/")

    def request(self, method, url, *args, **kwargs):
        if url.startswith(PLATFORM):
            url = self.fake_url + url[len(PLATFORM):]
        return super().request(method, url, *args, **kwargs)


def main():
    fake_url, runs, targets = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    for target in targets:
        video, lang = target.split(":")
        for _ in range(runs):
            # a new session per fetch: cold, no connection reuse, as our side uses a new client
            api = YouTubeTranscriptApi(http_client=ToFake(fake_url))
            started = time.perf_counter()
            try:
                fetched = api.fetch(video, languages=[lang])
                ms = (time.perf_counter() - started) * 1000
                print(json.dumps({"video": video, "ms": ms, "segments": len(fetched.snippets)}), flush=True)
            except Exception as err:  # the benchmark reports failures, it does not hide them
                print(json.dumps({"video": video, "error": f"{type(err).__name__}: {err}"[:300]}), flush=True)


if __name__ == "__main__":
    main()
