/**
 * Server side of a batch method: one server-streaming call that answers several requests of a
 * unary method (the extractor's deprecated GetTranscripts carries GetTranscript requests; its
 * StreamTranscripts is batchStreamHandler's). grpc-js spends far
 * more CPU per call (HTTP/2 stream, headers, trailers, interceptors) than per message, so a client
 * that coalesces concurrent requests into one call saves most of that cost.
 *
 * Each item runs as its unary call would: its own request id, a logger carrying it, the call's
 * deadline and cancellation; each is answered as soon as it finishes (completion order), with its
 * response or its failure as the very status + metadata its unary call would have carried.
 */
import { Errors } from '@subx/errors';
import type { Logger } from '@subx/ports';
import { observeGrpcCall } from '../metrics/grpc.ts';
import { serviceLoggerOf } from './call-context.ts';
import { grpcStatusName, toItemFailure } from './errors.ts';
import type { ItemFailure } from './errors.ts';
import type { CallContext } from './service-definition.ts';

export interface BatchItem<ItemReq> {
  request: ItemReq;
  /** Empty: the call's request id with `#index`. */
  requestId: string;
}

export interface BatchHandlerOptions<Req, ItemReq, ItemRes, Res> {
  /**
   * The unary method each item stands for ('/pkg.Service/Method'): in each item's logs, and each
   * item is counted in the server's gRPC metrics as one call of it (its code, its time), so rates,
   * error ratios and CPU per transcript read the same whether callers batch or not. The batch
   * call itself is counted once more under its own method.
   */
  itemRpc: string;
  /** More items (or none) refuse the whole call with INVALID_ARGUMENT. */
  maxItems: number;
  items(request: Req): readonly BatchItem<ItemReq>[];
  /** The unary handler's logic for one item. */
  handle(request: ItemReq, ctx: CallContext): Promise<ItemRes> | ItemRes;
  ok(index: number, response: ItemRes): Res;
  failed(index: number, failure: ItemFailure): Res;
  /**
   * When the request asks for it (`wanted`), answers that finish in the same event-loop turn go
   * out as one message, `join(first, more)`: one write on the server and one read on the client
   * instead of one per answer. A message holds the first answer and then as many more as fit in
   * `maxBytes` by `weigh` (an estimate of the encoded size: a message stays far below gRPC's
   * 4 MiB default limit, whatever the answers).
   */
  group?: AnswerGrouping<Req, Res>;
}

export interface AnswerGrouping<Req, Res> {
  wanted(request: Req): boolean;
  join(first: Res, more: Res[]): Res;
  weigh(response: Res): number;
  maxBytes: number;
}

/** `send`, or a sender that groups the answers of one turn (BatchHandlerOptions.group). */
function answerSender<Res>(
  send: (response: Res) => void,
  group: Omit<AnswerGrouping<never, Res>, 'wanted'> | undefined,
): { answer(response: Res): void; flush(): void } {
  if (!group) return { answer: send, flush: () => undefined };
  let pending: Res[] = [];
  const flush = () => {
    const ready = pending;
    pending = [];
    for (let first = 0; first < ready.length;) {
      let bytes = group.weigh(ready[first]!);
      let end = first + 1;
      while (end < ready.length && bytes + group.weigh(ready[end]!) <= group.maxBytes) {
        bytes += group.weigh(ready[end]!);
        end++;
      }
      send(group.join(ready[first]!, ready.slice(first + 1, end)));
      first = end;
    }
  };
  return {
    answer(response) {
      pending.push(response);
      if (pending.length === 1) setImmediate(flush);
    },
    flush,
  };
}

/**
 * An item's logger, made when first used (a pino child with redaction is not free): from the
 * service's logger, not the call's, so that a line carries one request_id. A context that
 * startGrpcServer did not make has no service logger behind it: its items log through its logger.
 */
function itemLogger(call: CallContext, requestId: string, itemRpc: string): () => Logger {
  let logger: Logger | undefined;
  return () =>
    (logger ??=
      serviceLoggerOf(call)?.child({
        request_id: requestId,
        rpc: itemRpc,
        batch_request_id: call.requestId,
      }) ?? call.logger);
}

/** The item's context on a batch call: the call's deadline and signal. */
function itemContext(call: CallContext, requestId: string, itemRpc: string): CallContext {
  const logger = itemLogger(call, requestId, itemRpc);
  return {
    requestId,
    get logger() {
      return logger();
    },
    metadata: call.metadata,
    deadline: call.deadline,
    signal: call.signal,
  };
}

/**
 * One item's answer, `ok(index, response)` or `failed(index, failure)` as its unary call would
 * have ended, with its gRPC code for the metrics (`cancelled`: the caller stopped waiting).
 */
async function answerItem<ItemReq, ItemRes, Res>(
  options: {
    handle(request: ItemReq, ctx: CallContext): Promise<ItemRes> | ItemRes;
    ok(index: number, response: ItemRes): Res;
    failed(index: number, failure: ItemFailure): Res;
  },
  request: ItemReq,
  ctx: CallContext,
  index: number,
  cancelled: () => boolean = () => false,
): Promise<{ response: Res; code: string }> {
  try {
    return { response: options.ok(index, await options.handle(request, ctx)), code: 'OK' };
  } catch (err) {
    const failure = toItemFailure(err, ctx.logger);
    return {
      response: options.failed(index, failure),
      code: cancelled() ? 'CANCELLED' : grpcStatusName(failure.code),
    };
  }
}

/** A ServerStreamHandler (defineService) that runs every item concurrently. */
export function batchHandler<Req, ItemReq, ItemRes, Res>(
  options: BatchHandlerOptions<Req, ItemReq, ItemRes, Res>,
): (request: Req, ctx: CallContext, send: (response: Res) => void) => Promise<void> {
  return async (request, ctx, send) => {
    const items = options.items(request);
    if (items.length === 0 || items.length > options.maxItems) {
      throw Errors.invalidRequest(`a batch holds 1 to ${options.maxItems} items, not ${items.length}`);
    }
    const { answer, flush } = answerSender(send, options.group?.wanted(request) ? options.group : undefined);
    const runItem = async (item: BatchItem<ItemReq>, index: number) => {
      const itemCtx = itemContext(ctx, item.requestId || `${ctx.requestId}#${index}`, options.itemRpc);
      const t0 = performance.now();
      const { response, code } = await answerItem(options, item.request, itemCtx, index);
      observeGrpcCall('server', options.itemRpc, code, (performance.now() - t0) / 1000);
      answer(response);
    };
    // Never rejects: a throwing ok/failed/send (a bug) is logged, not left as an unhandled rejection
    // once the call has stopped waiting.
    const done = items.map((item, index) =>
      runItem(item, index).catch((err: unknown) =>
        ctx.logger.error({ err, index }, 'batch item not answered'),
      ),
    );
    // Every item ends within the handler's own bounds; a cancelled call stops waiting at once (the
    // items still running finish in the background and their answers are dropped by `send`).
    // The last answers go before the handler returns (and the call ends), not at the next turn.
    const all = Promise.all(done).then(flush);
    if (ctx.signal.aborted) return;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<void>((resolve) => {
      onAbort = resolve;
      ctx.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      await Promise.race([all, aborted]);
    } finally {
      if (onAbort) ctx.signal.removeEventListener('abort', onAbort);
    }
  };
}

/** One message of a batch stream (StreamTranscripts): its items, their numbers, and cancellations. */
export interface StreamBatch<ItemReq> {
  items: readonly (BatchItem<ItemReq> & {
    /** The item's own deadline, in ms from when the message is read; 0: defaultTimeoutMs. */
    timeoutMs: number;
  })[];
  /** The number of items[0] along the call; the next items follow it. */
  firstIndex: number;
  /** Numbers of items sent before that nobody waits for any more: stopped, not answered. */
  cancel: readonly number[];
  groupAnswers: boolean;
}

export interface BatchStreamHandlerOptions<Req, ItemReq, ItemRes, Res> {
  /** As BatchHandlerOptions.itemRpc. */
  itemRpc: string;
  /** More items in one message refuse the whole call with INVALID_ARGUMENT (a caller's bug). */
  maxItems: number;
  /**
   * Items in flight on one call; an item over it is answered SERVICE_UNAVAILABLE at once. It bounds
   * what a call holds (concurrent extractions, buffered answers), as maxItems does for a batch call.
   */
  maxInFlight: number;
  /** An item's deadline when it carries none. */
  defaultTimeoutMs: number;
  /** In the SERVICE_UNAVAILABLE of an item over maxInFlight ('extractor'). */
  serviceName: string;
  batch(request: Req): StreamBatch<ItemReq>;
  handle(request: ItemReq, ctx: CallContext): Promise<ItemRes> | ItemRes;
  /** `number` is the item's number along the call (the answer's index). */
  ok(number: number, response: ItemRes): Res;
  failed(number: number, failure: ItemFailure): Res;
  /** As BatchHandlerOptions.group; used when the call's first message asks for it. */
  group?: Omit<AnswerGrouping<Req, Res>, 'wanted'>;
}

/** An item running on a batch stream. Its signal is made only when its handler asks for it. */
interface StreamItem {
  /** Epoch ms. */
  deadline: number;
  controller: AbortController | undefined;
  timer: NodeJS.Timeout | undefined;
  /** Cancelled by the client, or the call ended: its answer is not sent. */
  dropped: boolean;
}

function stopStreamItem(item: StreamItem, reason: string): void {
  item.dropped = true;
  clearTimeout(item.timer);
  item.controller?.abort(new Error(reason));
}

/**
 * The item's context. The signal (an AbortController, and a timer for the item's deadline) is made
 * on first use: most items (cache hits) never read it, and the call itself bounds nothing per item.
 */
function streamItemContext(
  call: CallContext,
  requestId: string,
  itemRpc: string,
  item: StreamItem,
): CallContext {
  const logger = itemLogger(call, requestId, itemRpc);
  return {
    requestId,
    get logger() {
      return logger();
    },
    metadata: call.metadata,
    get deadline() {
      return new Date(item.deadline);
    },
    get signal() {
      if (!item.controller) {
        const controller = new AbortController();
        item.controller = controller;
        if (item.dropped || call.signal.aborted) controller.abort(new Error('call cancelled by the client'));
        else {
          item.timer = setTimeout(
            () => controller.abort(new Error("the item's deadline passed")),
            Math.max(0, item.deadline - Date.now()),
          );
          item.timer.unref();
        }
      }
      return item.controller.signal;
    },
  };
}

/**
 * A BidiStreamHandler (defineService) for a batch method on one long-lived call: every message's
 * items run concurrently as batchHandler's do, numbered along the call, each with its own
 * deadline; a message's `cancel` stops items the client no longer waits for. Once the client has
 * half-closed, the call ends (OK) when every item in flight is answered; a cancelled call stops
 * its items at once.
 */
export function batchStreamHandler<Req, ItemReq, ItemRes, Res>(
  options: BatchStreamHandlerOptions<Req, ItemReq, ItemRes, Res>,
): (requests: AsyncIterable<Req>, ctx: CallContext, send: (response: Res) => void) => Promise<void> {
  return async (requests, ctx, send) => {
    const inFlight = new Map<number, StreamItem>();
    let sender: { answer(response: Res): void; flush(): void } | undefined;
    let drained: (() => void) | undefined;

    const runItem = async (item: BatchItem<ItemReq>, number: number, running: StreamItem) => {
      const itemCtx = streamItemContext(
        ctx,
        item.requestId || `${ctx.requestId}#${number}`,
        options.itemRpc,
        running,
      );
      const t0 = performance.now();
      const { response, code } = await answerItem(
        options,
        item.request,
        itemCtx,
        number,
        () => running.dropped,
      );
      clearTimeout(running.timer);
      observeGrpcCall('server', options.itemRpc, code, (performance.now() - t0) / 1000);
      if (running.dropped) return;
      inFlight.delete(number);
      sender?.answer(response);
      if (inFlight.size === 0) drained?.();
    };

    const stopAll = (reason: string) => {
      for (const running of inFlight.values()) stopStreamItem(running, reason);
      inFlight.clear();
      drained?.();
    };
    const onAbort = () => stopAll('call cancelled by the client');
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      try {
        for await (const request of requests) {
          const batch = options.batch(request);
          if (batch.items.length > options.maxItems) {
            throw Errors.invalidRequest(
              `a message holds 0 to ${options.maxItems} items, not ${batch.items.length}`,
            );
          }
          for (const number of batch.cancel) {
            const running = inFlight.get(number);
            if (!running) continue;
            inFlight.delete(number);
            stopStreamItem(running, 'cancelled by the client');
          }
          sender ??= answerSender(send, batch.groupAnswers ? options.group : undefined);
          const now = Date.now();
          for (let i = 0; i < batch.items.length; i++) {
            const item = batch.items[i]!;
            // uint32 numbers, as the proto carries them
            const number = (batch.firstIndex + i) >>> 0;
            if (inFlight.has(number)) throw Errors.invalidRequest(`item ${number} is already in flight`);
            if (inFlight.size >= options.maxInFlight) {
              sender.answer(
                options.failed(
                  number,
                  toItemFailure(
                    Errors.serviceUnavailable(
                      options.serviceName,
                      new Error(`more than ${options.maxInFlight} items in flight on one call`),
                    ),
                    ctx.logger,
                  ),
                ),
              );
              continue;
            }
            const running: StreamItem = {
              deadline: now + (item.timeoutMs || options.defaultTimeoutMs),
              controller: undefined,
              timer: undefined,
              dropped: false,
            };
            inFlight.set(number, running);
            // Never rejects: a throwing ok/failed/send (a bug) is logged.
            runItem(item, number, running).catch((err: unknown) =>
              ctx.logger.error({ err, index: number }, 'batch item not answered'),
            );
          }
        }
      } catch (err) {
        // A cancelled call ends the iteration with a premature close: nothing to report.
        if (ctx.signal.aborted) return;
        stopAll('the call failed');
        throw err;
      }
      // Half-closed: the items in flight are answered before the call ends.
      if (inFlight.size > 0 && !ctx.signal.aborted) {
        await new Promise<void>((resolve) => {
          drained = resolve;
        });
      }
      sender?.flush();
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
  };
}
