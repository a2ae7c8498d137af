/**
 * grpc.health.v1.Health (Check + Watch), written here instead of using `grpc-health-check` because
 * that package loads its .proto with @grpc/proto-loader at runtime and its Watch streams never end,
 * which holds `tryShutdown()` open until the force timeout. Wire-compatible with the standard
 * proto: https://github.com/grpc/grpc/blob/master/doc/health-checking.md
 */
import { BinaryReader, BinaryWriter } from '@bufbuild/protobuf/wire';
import * as grpc from '@grpc/grpc-js';

export type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

const STATUS_NUMBER: Record<ServingStatus, number> = {
  UNKNOWN: 0,
  SERVING: 1,
  NOT_SERVING: 2,
  SERVICE_UNKNOWN: 3,
};
const STATUS_NAME: readonly ServingStatus[] = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

interface HealthCheckRequest {
  service: string;
}
interface HealthCheckResponse {
  status: ServingStatus;
}

function encodeRequest(message: HealthCheckRequest): Buffer {
  const writer = new BinaryWriter();
  if (message.service !== '') writer.uint32(10).string(message.service);
  return Buffer.from(writer.finish());
}

function decodeRequest(buffer: Buffer): HealthCheckRequest {
  const reader = new BinaryReader(buffer);
  const message: HealthCheckRequest = { service: '' };
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === 2) message.service = reader.string();
    else reader.skip(wireType);
  }
  return message;
}

function encodeResponse(message: HealthCheckResponse): Buffer {
  const writer = new BinaryWriter();
  const status = STATUS_NUMBER[message.status];
  if (status !== 0) writer.uint32(8).int32(status);
  return Buffer.from(writer.finish());
}

function decodeResponse(buffer: Buffer): HealthCheckResponse {
  const reader = new BinaryReader(buffer);
  const message: HealthCheckResponse = { status: 'UNKNOWN' };
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === 0) message.status = STATUS_NAME[reader.int32()] ?? 'UNKNOWN';
    else reader.skip(wireType);
  }
  return message;
}

export const HealthServiceName = 'grpc.health.v1.Health';

export const HealthService = {
  check: {
    path: '/grpc.health.v1.Health/Check',
    requestStream: false,
    responseStream: false,
    requestSerialize: encodeRequest,
    requestDeserialize: decodeRequest,
    responseSerialize: encodeResponse,
    responseDeserialize: decodeResponse,
  },
  watch: {
    path: '/grpc.health.v1.Health/Watch',
    requestStream: false,
    responseStream: true,
    requestSerialize: encodeRequest,
    requestDeserialize: decodeRequest,
    responseSerialize: encodeResponse,
    responseDeserialize: decodeResponse,
  },
} as const satisfies grpc.ServiceDefinition;

export interface HealthClient extends grpc.Client {
  check(
    request: HealthCheckRequest,
    metadata: grpc.Metadata,
    options: Partial<grpc.CallOptions>,
    callback: (error: grpc.ServiceError | null, response: HealthCheckResponse) => void,
  ): grpc.ClientUnaryCall;
  watch(
    request: HealthCheckRequest,
    options?: Partial<grpc.CallOptions>,
  ): grpc.ClientReadableStream<HealthCheckResponse>;
}

export const HealthClient = grpc.makeGenericClientConstructor(
  HealthService,
  'grpc.health.v1.Health',
) as unknown as {
  new (
    address: string,
    credentials: grpc.ChannelCredentials,
    options?: Partial<grpc.ClientOptions>,
  ): HealthClient;
};

export interface HealthServer {
  set(service: string, status: ServingStatus): void;
  get(service: string): ServingStatus | undefined;
  services(): string[];
  /** Ends every Watch stream (after shutdown has sent NOT_SERVING) so tryShutdown can finish. */
  endWatches(): void;
  addTo(server: grpc.Server): void;
}

export function createHealthServer(initial: Record<string, ServingStatus> = {}): HealthServer {
  const statuses = new Map<string, ServingStatus>(Object.entries(initial));
  const watchers = new Map<string, Set<grpc.ServerWritableStream<HealthCheckRequest, HealthCheckResponse>>>();

  const implementation = {
    check(
      call: grpc.ServerUnaryCall<HealthCheckRequest, HealthCheckResponse>,
      callback: grpc.sendUnaryData<HealthCheckResponse>,
    ) {
      const status = statuses.get(call.request.service);
      if (status === undefined) callback({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
      else callback(null, { status });
    },
    watch(call: grpc.ServerWritableStream<HealthCheckRequest, HealthCheckResponse>) {
      const service = call.request.service;
      let set = watchers.get(service);
      if (!set) watchers.set(service, (set = new Set()));
      set.add(call);
      const remove = () => set.delete(call);
      call.on('cancelled', remove);
      call.on('close', remove);
      call.write({ status: statuses.get(service) ?? 'SERVICE_UNKNOWN' });
    },
  };

  return {
    set(service, status) {
      if (statuses.get(service) === status) return;
      statuses.set(service, status);
      for (const call of watchers.get(service) ?? []) call.write({ status });
    },
    get: (service) => statuses.get(service),
    services: () => [...statuses.keys()],
    endWatches() {
      for (const set of watchers.values()) {
        for (const call of set) call.end();
        set.clear();
      }
    },
    addTo(server) {
      server.addService(HealthService, implementation);
    },
  };
}
