import {
  boolEnv,
  csv,
  durationMs,
  loadConfig,
  metricsPort,
  serviceBasicsEnv,
  nameString,
  port,
  positiveInt,
  secret,
  trustedProxyList,
  httpUrl,
  urlStringOf,
} from '@subx/service-kit';
import { z } from 'zod';

/** Environment of the dashboard (services/dashboard/README.md has the table). */
export const ConfigSchema = z
  .object({
    DASHBOARD_PORT: port.default(8090),
    /** `/metrics` (Prometheus) on its own port; `off` disables it. */
    METRICS_PORT: metricsPort.default(9469),
    HOST: nameString.default('0.0.0.0'),
    /** The gateway's public API (the playground's curl shows it unless PUBLIC_API_URL is set). */
    GATEWAY_URL: httpUrl.default('http://127.0.0.1:8080'),
    /**
     * The gateway's admin listener (ADMIN_HOST:ADMIN_PORT): every call the dashboard makes (accounts,
     * keys, usage, the playground's calls) goes here, never to the public port.
     */
    GATEWAY_ADMIN_URL: httpUrl.default('http://127.0.0.1:8081'),
    /** The gateway's admin bearer token. */
    ADMIN_TOKEN: secret(z.string().min(1)),
    /** The admin token being rotated out: anonymous forms signed under it stay valid while set. */
    ADMIN_TOKEN_PREVIOUS: secret(z.string().min(1)).optional(),
    /** The gateway URL people use, shown in the playground's curl. Default: GATEWAY_URL. */
    PUBLIC_API_URL: httpUrl.optional(),
    /** The dashboard's own public URL: the base of the emailed links. Default: http://localhost:PORT. */
    DASHBOARD_PUBLIC_URL: httpUrl.optional(),
    /**
     * smtp:// or smtps:// URL (credentials allowed). Unset: each mail (with its one-time link) is
     * written to the log, which needs MAIL_TO_LOG=true under NODE_ENV=production.
     */
    SMTP_URL: secret(urlStringOf(['smtp:', 'smtps:'])).optional(),
    /** Without SMTP_URL: `true` accepts that mails go to the log; `false` refuses to start. */
    MAIL_TO_LOG: boolEnv.optional(),
    /** Only `production` changes anything: mails may not go to the log unless MAIL_TO_LOG=true. */
    NODE_ENV: z.string().trim().optional(),
    MAIL_FROM: z.string().trim().min(3).default('subx <no-reply@subx.local>'),
    /** These addresses get the operator role once confirmed (case-insensitive). */
    OPERATOR_EMAILS: csv.default([]),
    /** How long after entering their password an operator may act before entering it again. */
    OPERATOR_REAUTH_MS: durationMs.default(10 * 60_000),
    /**
     * Proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (IPs or CIDRs, csv). Unset:
     * none, so the client IP is the socket's and Secure cookies follow the socket's TLS.
     */
    TRUST_PROXY: trustedProxyList.default([]),
    /** Always mark cookies Secure, whatever the request (a TLS-terminating proxy we cannot list). */
    COOKIE_SECURE: z.enum(['auto', 'always']).default('auto'),
    SESSION_TTL_MS: durationMs.default(12 * 3_600_000),
    /** Deadline of each call to the gateway (and of each SMTP wait). */
    GATEWAY_TIMEOUT_MS: durationMs.default(15_000),
    /**
     * Bound on receiving one whole request (slow-loris); idle keep-alive sockets close after
     * DASHBOARD_KEEP_ALIVE_TIMEOUT_MS.
     */
    DASHBOARD_REQUEST_TIMEOUT_MS: durationMs.default(30_000),
    DASHBOARD_KEEP_ALIVE_TIMEOUT_MS: durationMs.default(10_000),
    /** scrypt cost N (a power of two); r = 8 and p = 3 are fixed (README "Passwords"). */
    PASSWORD_SCRYPT_N: positiveInt
      .refine((n) => n >= 16_384 && (n & (n - 1)) === 0, { error: 'must be a power of two, at least 16384' })
      .default(32_768),
    REDIS_URL: secret(urlStringOf(['redis:', 'rediss:'])).optional(),
    MONGO_URL: secret(urlStringOf(['mongodb:', 'mongodb+srv:'])).optional(),
    MONGO_DB: nameString.default('subx'),
    /** LOG_LEVEL and SHUTDOWN_TIMEOUT_MS, read as by every service. */
    ...serviceBasicsEnv,
  })
  .superRefine((config, ctx) => {
    // Without SMTP every mail, reset and confirmation links included, lands in the log: in
    // production that hands account takeover to whoever reads the logs, so it must be chosen.
    if (config.SMTP_URL) return;
    if (
      config.MAIL_TO_LOG === false ||
      (config.MAIL_TO_LOG === undefined && config.NODE_ENV === 'production')
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['SMTP_URL'],
        message:
          'is required (NODE_ENV=production or MAIL_TO_LOG=false): without it every mail, with its one-time reset or confirmation link, is written to the log; set SMTP_URL, or MAIL_TO_LOG=true to accept that',
      });
    }
  });

export type DashboardConfig = z.output<typeof ConfigSchema>;

export function loadDashboardConfig(env: Record<string, string | undefined> = process.env): DashboardConfig {
  return loadConfig(ConfigSchema, env);
}
