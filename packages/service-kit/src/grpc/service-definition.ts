/** Types derived from ts-proto service definitions, and the pairing of a definition with its handlers. */
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '@subx/ports';

/** One unary method of a ts-proto `XServiceService` definition. */
// `any` defaults: a registry of heterogeneous methods must accept every request/response type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface UnaryMethodDefinition<Req = any, Res = any> {
  path: string;
  requestStream: false;
  responseStream: false;
  requestSerialize(value: Req): Buffer;
  requestDeserialize(bytes: Buffer): Req;
  responseSerialize(value: Res): Buffer;
  responseDeserialize(bytes: Buffer): Res;
}

/** One server-streaming method (one request, a stream of responses). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface ServerStreamMethodDefinition<Req = any, Res = any> {
  path: string;
  requestStream: false;
  responseStream: true;
  requestSerialize(value: Req): Buffer;
  requestDeserialize(bytes: Buffer): Req;
  responseSerialize(value: Res): Buffer;
  responseDeserialize(bytes: Buffer): Res;
}

/** One bidirectional-streaming method (a stream of requests, a stream of responses). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface BidiStreamMethodDefinition<Req = any, Res = any> {
  path: string;
  requestStream: true;
  responseStream: true;
  requestSerialize(value: Req): Buffer;
  requestDeserialize(bytes: Buffer): Req;
  responseSerialize(value: Res): Buffer;
  responseDeserialize(bytes: Buffer): Res;
}

/** The method kinds startGrpcServer serves (client streaming is not supported). */
export type MethodDefinition =
  UnaryMethodDefinition | ServerStreamMethodDefinition | BidiStreamMethodDefinition;

export type ServiceMethods = Record<string, MethodDefinition>;

type RequestOf<M> = M extends { requestDeserialize(bytes: Buffer): infer R } ? R : never;
type ResponseOf<M> = M extends { responseSerialize(value: infer R): Buffer } ? R : never;

export interface CallContext {
  requestId: string;
  /** Child logger with request_id and rpc. */
  logger: Logger;
  metadata: grpc.Metadata;
  /** The caller's deadline, if any: pass it on to downstream calls. */
  deadline: Date | undefined;
  /** Aborted when the caller cancels or its deadline passes. */
  signal: AbortSignal;
}

export type UnaryHandler<M> = (
  request: RequestOf<M>,
  ctx: CallContext,
) => Promise<ResponseOf<M>> | ResponseOf<M>;

/**
 * A server-streaming handler: `send` writes one response (dropped once the call is cancelled); the
 * call ends with OK when the promise resolves, with the error's status when it rejects. A handler
 * whose answers are not capped by its own work awaits `drained()` between them: it resolves once
 * the client has taken what was written (or the call ended), so the write buffer stays small.
 */
export type ServerStreamHandler<M> = (
  request: RequestOf<M>,
  ctx: CallContext,
  send: (response: ResponseOf<M>) => void,
  drained: () => Promise<void>,
) => Promise<void> | void;

/**
 * A bidirectional-streaming handler: `requests` yields the client's messages until it half-closes;
 * `send` as in ServerStreamHandler; the call ends with OK when the promise resolves, with the
 * error's status when it rejects.
 */
export type BidiStreamHandler<M> = (
  requests: AsyncIterable<RequestOf<M>>,
  ctx: CallContext,
  send: (response: ResponseOf<M>) => void,
) => Promise<void> | void;

export type ServiceImplementation<D> = {
  [K in keyof D]: D[K] extends { requestStream: true; responseStream: true }
    ? BidiStreamHandler<D[K]>
    : D[K] extends { responseStream: true }
      ? ServerStreamHandler<D[K]>
      : UnaryHandler<D[K]>;
};

export interface ServiceRegistration {
  definition: ServiceMethods;
  implementation: Record<
    string,
    | UnaryHandler<UnaryMethodDefinition>
    | ServerStreamHandler<ServerStreamMethodDefinition>
    | BidiStreamHandler<BidiStreamMethodDefinition>
  >;
}

/** Pairs a definition with its handlers so the handlers are type-checked against the contract. */
export function defineService<D extends ServiceMethods>(
  definition: D,
  implementation: ServiceImplementation<D>,
): ServiceRegistration {
  return { definition, implementation: implementation as ServiceRegistration['implementation'] };
}

/** The fully-qualified service name ('subx.comments.v1.CommentsService') from a definition. */
export function serviceNameOf(definition: ServiceMethods): string {
  const first = Object.values(definition)[0];
  if (!first) throw new Error('empty service definition');
  return first.path.split('/')[1] ?? '';
}
