/**
 * gRPC over TLS, for every service and every client, from the environment (each service's config
 * schema spreads `grpcTlsEnv`; README "Internal traffic"):
 *
 *   GRPC_TLS_CERT_FILE, GRPC_TLS_KEY_FILE  this service's certificate and key (PEM): its gRPC server
 *                                          speaks TLS; its clients present them when a server asks
 *                                          for a client certificate.
 *   GRPC_TLS_CLIENT_CA_FILE                the server requires client certificates signed by this CA
 *                                          (mutual TLS).
 *   GRPC_TLS                               true: this service's clients speak TLS (on by itself
 *                                          when GRPC_TLS_CA_FILE is set).
 *   GRPC_TLS_CA_FILE                       the CA clients verify servers with (default: the system's).
 *   GRPC_TLS_SERVER_NAME                   the name clients expect in the server's certificate, when
 *                                          it is not the host of the address (an IP, a Service name).
 *
 * Nothing set: plaintext, as before (a cluster's NetworkPolicy, or one process in `npm start`).
 * Files are read once at start; a missing or unreadable one is a ConfigError naming the variable.
 */
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { z } from 'zod';
import { boolEnv, ConfigError } from '../config.ts';
import type { ConfigIssue } from '../config.ts';

const file = z.string().trim().min(1);

/** Spread into a service's config schema. */
export const grpcTlsEnv = {
  GRPC_TLS: boolEnv.default(false),
  GRPC_TLS_CERT_FILE: file.optional(),
  GRPC_TLS_KEY_FILE: file.optional(),
  GRPC_TLS_CLIENT_CA_FILE: file.optional(),
  GRPC_TLS_CA_FILE: file.optional(),
  GRPC_TLS_SERVER_NAME: z.string().trim().min(1).optional(),
};

export type GrpcTlsConfig = {
  [K in keyof typeof grpcTlsEnv]?: z.output<(typeof grpcTlsEnv)[K]>;
};

export interface GrpcTls {
  /** For startGrpcServer's `credentials`. */
  serverCredentials: grpc.ServerCredentials;
  /** For createGrpcClient's `credentials` and `channelOptions`. */
  client: { credentials: grpc.ChannelCredentials; channelOptions: grpc.ChannelOptions };
  /** What is on, for the startup log: no paths, no keys. */
  summary: { server: 'plaintext' | 'tls' | 'mutual-tls'; client: 'plaintext' | 'tls' | 'mutual-tls' };
}

function readPem(variable: string, path: string | undefined, issues: ConfigIssue[]): Buffer | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path);
  } catch (err) {
    issues.push({
      key: variable,
      message: `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    });
    return undefined;
  }
}

/** Builds the credentials once; throws one ConfigError naming every bad variable. */
export function grpcTlsFromConfig(config: GrpcTlsConfig): GrpcTls {
  const issues: ConfigIssue[] = [];
  const cert = readPem('GRPC_TLS_CERT_FILE', config.GRPC_TLS_CERT_FILE, issues);
  const key = readPem('GRPC_TLS_KEY_FILE', config.GRPC_TLS_KEY_FILE, issues);
  const clientCa = readPem('GRPC_TLS_CLIENT_CA_FILE', config.GRPC_TLS_CLIENT_CA_FILE, issues);
  const ca = readPem('GRPC_TLS_CA_FILE', config.GRPC_TLS_CA_FILE, issues);
  if (Boolean(config.GRPC_TLS_CERT_FILE) !== Boolean(config.GRPC_TLS_KEY_FILE)) {
    issues.push({
      key: config.GRPC_TLS_CERT_FILE ? 'GRPC_TLS_KEY_FILE' : 'GRPC_TLS_CERT_FILE',
      message: 'is required with the other one (a certificate and its key go together)',
    });
  }
  if (config.GRPC_TLS_CLIENT_CA_FILE && !config.GRPC_TLS_CERT_FILE) {
    issues.push({
      key: 'GRPC_TLS_CLIENT_CA_FILE',
      message: 'needs GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE (mutual TLS is TLS first)',
    });
  }
  if (issues.length > 0) throw new ConfigError(issues);

  const serving = cert && key;
  const serverCredentials = serving
    ? grpc.ServerCredentials.createSsl(
        clientCa ?? null,
        [{ cert_chain: cert, private_key: key }],
        Boolean(clientCa),
      )
    : grpc.ServerCredentials.createInsecure();
  const clientTls = Boolean(config.GRPC_TLS) || Boolean(ca);
  const credentials = clientTls
    ? grpc.credentials.createSsl(ca ?? null, serving ? key : null, serving ? cert : null)
    : grpc.credentials.createInsecure();
  const channelOptions: grpc.ChannelOptions =
    clientTls && config.GRPC_TLS_SERVER_NAME
      ? {
          'grpc.ssl_target_name_override': config.GRPC_TLS_SERVER_NAME,
          'grpc.default_authority': config.GRPC_TLS_SERVER_NAME,
        }
      : {};
  return {
    serverCredentials,
    client: { credentials, channelOptions },
    summary: {
      server: !serving ? 'plaintext' : clientCa ? 'mutual-tls' : 'tls',
      client: !clientTls ? 'plaintext' : serving ? 'mutual-tls' : 'tls',
    },
  };
}
