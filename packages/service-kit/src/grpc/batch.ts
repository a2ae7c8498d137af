/**
 * Server side of a batch method: one server-streaming call that answers several requests of a
 * unary method (the extractor's GetTranscripts carries GetTranscript requests). grpc-js spends far
 * more CPU per call (HTTP/2 stream, headers, trailers, interceptors) than per message, so a client
 * that coalesces concurrent requests into one call saves most of that cost.
 *
 * Each item runs as its unary call would: its own request id, a logger carrying it, the call's
 * deadline and cancellation; each is answered as soon as it finishes (completion order), with its
 * response or its failure as the very status + metadata its unary call would have carried.
 */
import { Errors } from '@subx/errors';
import type { Logger } from 'pino';
import { observeGrpcCall } from '../metrics/instruments.ts';
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

/** The item's context: the logger (a pino child with redaction is not free) is made when first used. */
function itemContext(call: CallContext, requestId: string, itemRpc: string): CallContext {
  let logger: Logger | undefined;
  return {
    requestId,
    get logger() {
      // From the service's logger, not the call's: one request_id per line.
      logger ??= (serviceLoggerOf(call) ?? call.logger).child({
        request_id: requestId,
        rpc: itemRpc,
        batch_request_id: call.requestId,
      });
      return logger;
    },
    metadata: call.metadata,
    deadline: call.deadline,
    signal: call.signal,
  };
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
      let response: Res;
      let code = 'OK';
      try {
        response = options.ok(index, await options.handle(item.request, itemCtx));
      } catch (err) {
        const failure = toItemFailure(err, itemCtx.logger);
        code = grpcStatusName(failure.code);
        response = options.failed(index, failure);
      }
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
