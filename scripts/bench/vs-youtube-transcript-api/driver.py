"""Runs youtube-transcript-api against the fake platform for the subx benchmark.

Every request the library makes to https://www.youtube.com is sent to the fake instead (a requests
Session that rewrites the origin), so the library runs unmodified: watch page, ANDROID /player,
timedtext. Prints one JSON line per fetch: {"video", "ms", "segments"} or {"video", "error"}.

usage: python driver.py FAKE_URL RUNS VIDEO:LANG [VIDEO:LANG ...]
       python driver.py --cpu FAKE_URL TOTAL CONCURRENCY VIDEO:LANG [VIDEO:LANG ...]

--cpu: TOTAL fetches, CONCURRENCY at a time (threads, each with its own session), the videos round
robin; prints one JSON line {"fetches", "errors", "cpu_ms", "wall_ms"} with the process CPU time
(user + system) spent on the fetches alone, after the imports.
"""
import resource
from concurrent.futures import ThreadPoolExecutor
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


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def cpu_mode(fake_url, total, concurrency, targets):
    jobs = [targets[i % len(targets)].split(":") for i in range(total)]

    def fetch(job):
        video, lang = job
        try:
            YouTubeTranscriptApi(http_client=ToFake(fake_url)).fetch(video, languages=[lang])
            return None
        except Exception as err:
            return f"{type(err).__name__}: {err}"[:300]

    cpu0, wall0 = cpu_seconds(), time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        errors = [e for e in pool.map(fetch, jobs) if e]
    cpu_ms = (cpu_seconds() - cpu0) * 1000
    wall_ms = (time.perf_counter() - wall0) * 1000
    print(json.dumps({"fetches": total, "errors": len(errors), "first_error": errors[0] if errors else None,
                      "cpu_ms": cpu_ms, "wall_ms": wall_ms}), flush=True)


def main():
    if sys.argv[1] == "--cpu":
        cpu_mode(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:])
        return
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
