/** Types derived from ts-proto service definitions, and the pairing of a definition with its handlers. */
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';

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

export type UnaryServiceDefinition = Record<string, UnaryMethodDefinition>;

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

export type ServiceImplementation<D> = { [K in keyof D]: UnaryHandler<D[K]> };

export interface ServiceRegistration {
  definition: UnaryServiceDefinition;
  implementation: Record<string, UnaryHandler<UnaryMethodDefinition>>;
}

/** Pairs a definition with its handlers so the handlers are type-checked against the contract. */
export function defineService<D extends UnaryServiceDefinition>(
  definition: D,
  implementation: ServiceImplementation<D>,
): ServiceRegistration {
  return { definition, implementation: implementation as ServiceRegistration['implementation'] };
}

/** The fully-qualified service name ('subx.comments.v1.CommentsService') from a definition. */
export function serviceNameOf(definition: UnaryServiceDefinition): string {
  const first = Object.values(definition)[0];
  if (!first) throw new Error('empty service definition');
  return first.path.split('/')[1] ?? '';
}
