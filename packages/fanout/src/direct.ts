import { Errors, isAppError } from '@subx/errors';
import { countFanOutDeadlineMissed, withTimeout } from '@subx/service-kit';
import type { ExtractorBackend } from '@subx/backends';
import type { FanOut, FanOutJob, FanOutOutcome, FanOutRequest } from './types.ts';

/**
 * Fan-out by direct gRPC calls, `concurrency` at a time. Each item is bounded by its own budget
 * and by what is left of the total; an item still running at its bound is cancelled and reported
 * as TIMEOUT, so the request answers on time even if a backend ignores cancellation.
 */
export function createDirectFanOut(deps: { extractor: ExtractorBackend; concurrency: number }): FanOut {
  const { extractor } = deps;
  const concurrency = Math.max(1, deps.concurrency);

  async function one(
    job: FanOutJob,
    budgetMs: number,
    requestId: string,
    accountId: string,
  ): Promise<FanOutOutcome> {
    if (budgetMs <= 0) return { ok: false, error: Errors.timeout() };
    const controller = new AbortController();
    const work = () =>
      extractor
        .getTranscript(
          {
            videoId: job.videoId,
            language: job.language,
            include: job.include,
            forceRefresh: false,
            translate: job.translate,
            // Batch and playlist items render the segments themselves (mappers.ts successItem).
            segmentsAsJson: false,
            segmentsJsonAsBytes: false,
            headJsonAsBytes: false,
            answerJson: false,
            mode: job.mode ?? 0,
            maxAudioSeconds: job.maxAudioSeconds ?? 0,
            accountId,
          },
          { deadlineMs: budgetMs, signal: controller.signal, requestId },
        )
        .then(
          (transcript): FanOutOutcome => ({ ok: true, transcript }),
          (error: unknown): FanOutOutcome => ({
            ok: false,
            error: controller.signal.aborted
              ? Errors.timeout()
              : isAppError(error)
                ? error
                : Errors.internal(error),
          }),
        );
    return withTimeout(work, budgetMs, (): FanOutOutcome => {
      countFanOutDeadlineMissed('direct', 1);
      controller.abort();
      return { ok: false, error: Errors.timeout() };
    });
  }

  return {
    async run(request: FanOutRequest): Promise<FanOutOutcome[]> {
      const deadline = performance.now() + request.totalTimeoutMs;
      const outcomes: FanOutOutcome[] = new Array<FanOutOutcome>(request.jobs.length);
      let next = 0;
      const worker = async () => {
        while (next < request.jobs.length) {
          const index = next++;
          const job = request.jobs[index]!;
          const left = Math.floor(deadline - performance.now());
          outcomes[index] = await one(
            job,
            Math.min(request.itemTimeoutMs, left),
            request.requestId,
            request.accountId ?? '',
          );
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, request.jobs.length) }, worker));
      return outcomes;
    },
  };
}
