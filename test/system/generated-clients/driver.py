"""A Python program written as a user of the generated client would write it.

The client is openapi-python-client's, generated from the live /openapi.json by
scripts/generated-clients.sh (package `subx_client` on PYTHONPATH). It calls every operation and
every format through it, with its typed models, and one error of each kind; the first surprise
raises (exit 1). Environment: as driver.ts (SUBX_BASE, SUBX_KEY, SUBX_FREE_KEY, SUBX_FREE_DAILY_LIMIT,
SUBX_VIDEO,
SUBX_PRIVATE_VIDEO, SUBX_COMMENTS_VIDEO, SUBX_PLAYLIST).
"""

import json
import os
import time
import uuid

from subx_client import AuthenticatedClient, Client
from subx_client.api.account import get_account
from subx_client.api.bulk_jobs import (
    cancel_job,
    create_job,
    get_job,
    get_job_result,
    get_job_results,
    list_jobs,
)
from subx_client.api.open_ import health, health_head, health_v1, health_v1_head, validate
from subx_client.api.subtitles_and_analysis import (
    analyze_comments,
    batch,
    comments,
    extract,
    extract_md,
    extract_srt,
    extract_txt,
    extract_vtt,
    playlist,
    summarize,
)
from subx_client.api.search import search
from subx_client.api.webhooks import get_webhook_secret, rotate_webhook_secret
from subx_client.models import (
    Account,
    AnalyzeCommentsBody,
    BatchBody,
    BatchBodyFormat,
    BatchItemFailure,
    BatchItemSuccess,
    CommentAnalysis,
    CommentsResult,
    CommentsSort,
    CreateJobBody,
    Error,
    ErrorCode,
    ExtractBody,
    ExtractBodyIncludeItem,
    ExtractMdBody,
    ExtractResult,
    ExtractSrtBody,
    ExtractTxtBody,
    ExtractVttBody,
    Health,
    Job,
    JobEstimateResult,
    JobList,
    JobResultSuccess,
    JobResultsPage,
    JobStatus,
    PlaylistResult,
    SearchPage,
    SearchType,
    SearchVideoResult,
    SummarizeBody,
    SummarizeBodyStyle,
    SummarizeResult,
    Urls,
    ValidateResult,
    WebhookSecret,
)
from subx_client.models import Playlist as PlaylistSource

BASE = os.environ["SUBX_BASE"]
VIDEO = f"https://youtu.be/{os.environ['SUBX_VIDEO']}"
PRIVATE = f"https://youtu.be/{os.environ['SUBX_PRIVATE_VIDEO']}"
COMMENTS = f"https://www.youtube.com/watch?v={os.environ['SUBX_COMMENTS_VIDEO']}"
PLAYLIST = f"https://www.youtube.com/playlist?list={os.environ['SUBX_PLAYLIST']}"

# The generated client's own authentication: `Authorization: Bearer <key>`.
client = AuthenticatedClient(base_url=BASE, token=os.environ["SUBX_KEY"], timeout=60)
# The same class sends X-API-Key when told to (no prefix).
free = AuthenticatedClient(
    base_url=BASE, token=os.environ["SUBX_FREE_KEY"], prefix="", auth_header_name="X-API-Key"
)
anonymous = Client(base_url=BASE)

checks: list[str] = []


def check(condition: bool, what: str, detail: object = None) -> None:
    if not condition:
        raise AssertionError(f"{what}: {detail!r}")
    checks.append(what)


# Open operations.
for op, name in ((health, "GET /health"), (health_v1, "GET /api/v1/health")):
    status = op.sync(client=anonymous)
    check(isinstance(status, Health) and status.status.value == "ok", name, status)
for op, name in ((health_head, "HEAD /health"), (health_v1_head, "HEAD /api/v1/health")):
    check(op.sync_detailed(client=anonymous).status_code == 200, name)
valid = validate.sync(client=anonymous, url_query=VIDEO)
check(isinstance(valid, ValidateResult) and valid.valid and valid.has_subtitles, "GET /api/v1/validate", valid)

# Extract: JSON, then each document format on its own path (read as text).
result = extract.sync(
    client=client,
    body=ExtractBody(url=VIDEO, include=[ExtractBodyIncludeItem.LIKE_COUNT]),
    idempotency_key=str(uuid.uuid4()),
)
check(isinstance(result, ExtractResult) and len(result.subtitles) > 0, "POST /api/v1/extract", result)
check(isinstance(result, ExtractResult) and result.rate_limit.remaining is not None, "extract: rate_limit")
plain = extract.sync(client=client, body=ExtractBody(url=VIDEO, include_timestamps=False))
check(isinstance(plain, ExtractResult) and isinstance(plain.text, str), "POST /api/v1/extract (plain text)", plain)
srt = extract_srt.sync(client=client, body=ExtractSrtBody(url=VIDEO))
check(isinstance(srt, str) and srt.startswith("1\n"), "POST /api/v1/extract.srt", srt)
vtt = extract_vtt.sync(client=client, body=ExtractVttBody(url=VIDEO))
check(isinstance(vtt, str) and vtt.startswith("WEBVTT"), "POST /api/v1/extract.vtt", vtt)
txt = extract_txt.sync(client=client, body=ExtractTxtBody(url=VIDEO, include_timestamps=False))
check(isinstance(txt, str) and len(txt) > 0, "POST /api/v1/extract.txt", txt)
md = extract_md.sync(client=client, body=ExtractMdBody(url=VIDEO))
check(isinstance(md, str) and md.startswith("# "), "POST /api/v1/extract.md", md)

# Batch and playlist: items are BatchItemSuccess or BatchItemFailure.
batched = batch.sync(client=client, body=BatchBody(urls=[VIDEO, PRIVATE, "not a url"], format_=BatchBodyFormat.SRT))
check(hasattr(batched, "results"), "POST /api/v1/batch", batched)
ok, unavailable, invalid = batched.results
check(isinstance(ok, BatchItemSuccess) and ok.content.startswith("1\n"), "batch: success item", ok)
check(
    isinstance(unavailable, BatchItemFailure) and unavailable.error_code == ErrorCode.VIDEO_UNAVAILABLE,
    "batch: failure item",
    unavailable,
)
check(isinstance(invalid, BatchItemFailure) and invalid.video_id is None, "batch: invalid URL item", invalid)
listed = playlist.sync(client=client, url_query=PLAYLIST, max_=2)
check(isinstance(listed, PlaylistResult) and listed.extracted_count == 2, "GET /api/v1/playlist", listed)

# Search: results are SearchVideoResult, SearchChannelResult or SearchPlaylistResult.
found = search.sync(client=client, q="test", type_=SearchType.VIDEO)
check(isinstance(found, SearchPage) and isinstance(found.results[0], SearchVideoResult), "GET /api/v1/search", found)
following = search.sync(client=client, q="test", type_=SearchType.VIDEO, cursor=found.next_cursor)
check(isinstance(following, SearchPage) and len(following.results) > 0, "GET /api/v1/search: next_cursor", following)

# Analysis operations (pro tier).
summary = summarize.sync(client=client, body=SummarizeBody(video_url=VIDEO, style=SummarizeBodyStyle.KEY_POINTS))
check(isinstance(summary, SummarizeResult) and len(summary.summary) > 0, "POST /api/v1/summarize", summary)
page = comments.sync(client=client, url_query=COMMENTS, max_=5, sort=CommentsSort.TIME)
check(isinstance(page, CommentsResult) and isinstance(page.comments[0].likes, int), "GET /api/v1/comments", page)
analysis = analyze_comments.sync(client=client, body=AnalyzeCommentsBody(video_url=COMMENTS, sample_size=10))
check(isinstance(analysis, CommentAnalysis) and analysis.sentiment.value in ("positive", "negative", "mixed"), "POST /api/v1/comments/analyze", analysis)

# Bulk jobs and the webhook secret.
created = create_job.sync_detailed(
    client=client,
    body=CreateJobBody(source=Urls(type_="urls", urls=[VIDEO, PRIVATE])),
    idempotency_key=str(uuid.uuid4()),
)
check(created.status_code == 202 and isinstance(created.parsed, Job), "POST /api/v1/jobs", created.content)
job = created.parsed
for _ in range(300):
    if job.status in (JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELED):
        break
    time.sleep(0.2)
    job = get_job.sync(job.job_id, client=client)
check(isinstance(job, Job) and job.status == JobStatus.COMPLETED, "GET /api/v1/jobs/{job_id}", job)
jobs = list_jobs.sync(client=client, limit=5)
check(isinstance(jobs, JobList) and any(j.job_id == job.job_id for j in jobs.jobs), "GET /api/v1/jobs", jobs)
results = get_job_results.sync(job.job_id, client=client, limit=10)
check(isinstance(results, JobResultsPage) and len(results.results) == 2, "GET /api/v1/jobs/{job_id}/results", results)
item = get_job_result.sync(job.job_id, 0, client=client)
check(isinstance(item, JobResultSuccess) and item.index == 0, "GET /api/v1/jobs/{job_id}/results/{index}", item)
failed = get_job_result.sync(job.job_id, 1, client=client)
check(isinstance(failed, Error) and failed.error.code == ErrorCode.VIDEO_UNAVAILABLE, "a failed job item answers its error", failed)
finished = cancel_job.sync_detailed(job.job_id, client=client)
check(
    finished.status_code == 409 and isinstance(finished.parsed, Error) and finished.parsed.error.code == ErrorCode.JOB_FINISHED,
    "DELETE /api/v1/jobs/{job_id} (finished)",
    finished.content,
)
running = create_job.sync(client=client, body=CreateJobBody(source=PlaylistSource(type_="playlist", url=PLAYLIST, max_=50)))
check(isinstance(running, Job), "POST /api/v1/jobs (playlist)", running)
dry = create_job.sync(client=client, body=CreateJobBody(source=Urls(type_="urls", urls=[VIDEO, VIDEO, PRIVATE]), dry_run=True))
check(
    isinstance(dry, JobEstimateResult) and dry.estimate.items == 2 and dry.estimate.duplicates_removed == 1,
    "POST /api/v1/jobs (dry run)",
    dry,
)
canceled = cancel_job.sync(running.job_id, client=client)
# Cancel answers the job (canceled), or 409 JOB_FINISHED when the job won the race and ended.
check(
    (isinstance(canceled, Job) and canceled.status == JobStatus.CANCELED)
    or (isinstance(canceled, Error) and canceled.error.code == ErrorCode.JOB_FINISHED),
    "DELETE /api/v1/jobs/{job_id}",
    canceled,
)
rotated = rotate_webhook_secret.sync_detailed(client=client)
check(rotated.status_code == 201 and isinstance(rotated.parsed, WebhookSecret), "POST /api/v1/webhooks/secret", rotated.content)
current = get_webhook_secret.sync(client=client)
check(isinstance(current, WebhookSecret) and current.secret == rotated.parsed.secret, "GET /api/v1/webhooks/secret", current)
standing = get_account.sync(client=client)
check(
    isinstance(standing, Account) and standing.tier.value == "pro" and standing.operations.summarize.allowed and standing.daily_used > 0,
    "GET /api/v1/account",
    standing,
)

# One error of each kind, as typed Error models with the catalogue's ErrorCode.
stranger = AuthenticatedClient(base_url=BASE, token="sxk_v1_notAKeyNotAKeyNotAKeyNotAKey00")
denied = extract.sync_detailed(client=stranger, body=ExtractBody(url=VIDEO))
check(denied.status_code == 401 and isinstance(denied.parsed, Error) and denied.parsed.error.code == ErrorCode.UNAUTHORIZED, "401 UNAUTHORIZED", denied.content)
bad = extract.sync_detailed(client=client, body=ExtractBody(url="dQw4w9WgXcQ"))
check(bad.status_code == 400 and isinstance(bad.parsed, Error) and bad.parsed.error.code == ErrorCode.INVALID_URL, "400 INVALID_URL", bad.content)
gone = extract.sync_detailed(client=client, body=ExtractBody(url=PRIVATE))
check(gone.status_code == 404 and isinstance(gone.parsed, Error) and gone.parsed.error.reason == "private", "404 VIDEO_UNAVAILABLE", gone.content)
no_job = get_job.sync_detailed("job_aaaaaaaaa0123456789abcdef", client=client)
check(no_job.status_code == 404 and isinstance(no_job.parsed, Error) and no_job.parsed.error.code == ErrorCode.JOB_NOT_FOUND, "404 JOB_NOT_FOUND", no_job.content)
tier = summarize.sync_detailed(client=free, body=SummarizeBody(video_url=VIDEO))
check(tier.status_code == 403 and isinstance(tier.parsed, Error) and tier.parsed.error.required_tier == "pro", "403 TIER_REQUIRED", tier.content)
# The free key's daily limit (SUBX_FREE_DAILY_LIMIT requests) runs out: 429 with Retry-After.
limited = extract.sync_detailed(client=free, body=ExtractBody(url=VIDEO))
for _ in range(int(os.environ["SUBX_FREE_DAILY_LIMIT"])):
    if limited.status_code == 429:
        break
    limited = extract.sync_detailed(client=free, body=ExtractBody(url=VIDEO))
check(
    isinstance(limited.parsed, Error)
    and limited.parsed.error.code == ErrorCode.RATE_LIMITED
    and "retry-after" in limited.headers,
    "429 RATE_LIMITED",
    limited.content,
)

print(json.dumps({"ok": True, "checks": len(checks)}))
