/**
 * gRPC calls, both sides: the server side in startGrpcServer, the client side in unaryCall (every service gets both).
 * Names follow Prometheus conventions (`_total` counters, `_seconds` units); the catalogue is in
 * packages/service-kit/README.md, the alerts that read them in deploy/helm/subx/templates/prometheusrule.yaml.
 */
import { batchedCounter, batchedHistogram } from './batched.ts';
import type { BatchedSeries } from './batched.ts';

const grpcLabels = ['grpc_service', 'grpc_method'] as const;
const grpcCodeLabels = ['grpc_service', 'grpc_method', 'grpc_code'] as const;

function splitPath(path: string): { grpc_service: string; grpc_method: string } {
  // '/subx.extractor.v1.ExtractorService/GetTranscript'
  const [, service = 'unknown', method = 'unknown'] = path.split('/');
  return { grpc_service: service, grpc_method: method };
}

// Every call (and every item of a batch call) records here: batched (batched.ts).
const GRPC_METRICS = {
  server: {
    calls: batchedCounter(
      'subx_grpc_server_handled_total',
      'gRPC calls handled by this server, by method and status code.',
      grpcCodeLabels,
    ),
    time: batchedHistogram(
      'subx_grpc_server_handling_seconds',
      'gRPC handling time on the server, by method.',
      grpcLabels,
    ),
  },
  client: {
    calls: batchedCounter(
      'subx_grpc_client_handled_total',
      'gRPC calls made by this process, by method and status code.',
      grpcCodeLabels,
    ),
    time: batchedHistogram(
      'subx_grpc_client_handling_seconds',
      'gRPC call time seen by the caller, by method.',
      grpcLabels,
    ),
  },
};

/**
 * One finished unary call on either side (`startGrpcServer`, `unaryCall`): `path` is the method's
 * '/pkg.Service/Method', `code` the grpc status name.
 */
export function observeGrpcCall(
  side: 'server' | 'client',
  path: string,
  code: string,
  seconds: number,
): void {
  const method = grpcSeriesOf(side, path);
  let byCode = method.calls.get(code);
  if (byCode === undefined) {
    byCode = GRPC_METRICS[side].calls.series(`${path} ${code}`, () => ({
      ...splitPath(path),
      grpc_code: code,
    }));
    method.calls.set(code, byCode);
  }
  byCode.record(1);
  method.time.record(seconds);
}

/**
 * The series of each side's methods, by the method's path and then the status code: found by
 * lookups of strings the caller has (the paths are constants of the generated code), not by
 * building a key per call. Bounded: the services' methods, and grpc's status codes.
 */
const grpcSeries = {
  server: new Map<string, GrpcMethodSeries>(),
  client: new Map<string, GrpcMethodSeries>(),
};
interface GrpcMethodSeries {
  time: BatchedSeries;
  calls: Map<string, BatchedSeries>;
}

function grpcSeriesOf(side: 'server' | 'client', path: string): GrpcMethodSeries {
  let method = grpcSeries[side].get(path);
  if (method === undefined) {
    method = { time: GRPC_METRICS[side].time.series(path, () => splitPath(path)), calls: new Map() };
    grpcSeries[side].set(path, method);
  }
  return method;
}
