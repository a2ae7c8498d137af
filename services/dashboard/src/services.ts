/**
 * What the dashboard's plugins and route groups share, built once per app: the stores' repositories,
 * the policies, and the few values derived from configuration. Route plugins get it as their options.
 */
import type { FastifyInstance } from 'fastify';
import type { DocumentStore, KeyValueStore } from '@subx/ports';
import type { PinoLogger } from '@subx/service-kit';
import type { AbuseLimits } from './auth/abuse-limits.ts';
import { createAbuseLimits } from './auth/abuse-limits.ts';
import type { AnonymousCsrf } from './auth/anonymous-csrf.ts';
import { createAnonymousCsrf } from './auth/anonymous-csrf.ts';
import type { AuditLog } from './auth/audit.ts';
import { createAuditLog } from './auth/audit.ts';
import type { DashboardConfig } from './config.ts';
import type { CookieNames } from './auth/cookies.ts';
import { cookiePolicy } from './auth/cookies.ts';
import type { FlashStore } from './views/flash.ts';
import { createFlashStore } from './views/flash.ts';
import type { SampleVideo } from './views/first-request.ts';
import { DEFAULT_SAMPLE_VIDEO_ID, videoUrl } from './views/first-request.ts';
import type { GatewayClient } from './gateway/client.ts';
import type { SendLink } from './mail/link-mail.ts';
import { createLinkMailer } from './mail/link-mail.ts';
import type { Mailer } from './mail/mailer.ts';
import type { OneTimeLinks } from './auth/one-time-links.ts';
import type { Guards } from './auth/guards.ts';
import { createGuards } from './auth/guards.ts';
import { createOneTimeLinks } from './auth/one-time-links.ts';
import type { OperatorPolicy } from './auth/operators.ts';
import { createOperatorPolicy } from './auth/operators.ts';
import { decoyHash } from './auth/passwords.ts';
import type { SessionStore } from './auth/sessions.ts';
import { createSessionStore } from './auth/sessions.ts';
import type { SignInThrottle } from './auth/sign-in-throttle.ts';
import { createSignInThrottle } from './auth/sign-in-throttle.ts';
import type { UserRepository } from './auth/users.ts';
import { createUserRepository } from './auth/users.ts';
import { messagePage } from './views/pages.ts';
import type { Invitations } from './workspaces/invitations.ts';
import { createInvitations } from './workspaces/invitations.ts';

export interface DashboardDeps {
  config: DashboardConfig;
  kv: KeyValueStore;
  store: DocumentStore;
  gateway: GatewayClient;
  mailer: Mailer;
  logger: PinoLogger;
  now?: () => number;
  /** `npm run demo`: the videos its replay has (the playground offers them, the snippets use the first). */
  demoVideos?: readonly SampleVideo[];
  /**
   * Without SMTP_URL: where mails (and their links) end up, said on the "check your inbox" page,
   * e.g. "the console where `npm run demo` runs".
   */
  mailsShownIn?: string;
}

export interface DashboardServices {
  config: DashboardConfig;
  kv: KeyValueStore;
  store: DocumentStore;
  mailer: Mailer;
  now: () => number;
  users: UserRepository;
  /** Invitations to workspaces (their memberships are the gateway's). */
  invitations: Invitations;
  sessions: SessionStore;
  throttle: SignInThrottle;
  limits: AbuseLimits;
  links: OneTimeLinks;
  audit: AuditLog;
  operators: OperatorPolicy;
  anonymousCsrf: AnonymousCsrf;
  cookiesFor: (request: Parameters<ReturnType<typeof cookiePolicy>>[0]) => CookieNames;
  /** The base of emailed links: configuration, never the request's Host header. */
  publicUrl: () => string;
  /** The gateway URL shown in the playground's curl and the first-request snippets. */
  apiUrl: string;
  /** The demo's replayed videos; empty outside the demo. */
  demoVideos: readonly SampleVideo[];
  /** A video the platform knows: the demo's first, else a public one. */
  sampleVideoUrl: string;
  /** Where mails go without SMTP_URL (the "check your inbox" page says it); null with SMTP. */
  mailsShownIn: string | null;
  /** One-time messages (a new key) across a POST-redirect-GET. */
  flash: FlashStore;
  /** A hash to verify against when the email is unknown, so timing does not reveal accounts. */
  decoy: Promise<string>;
  sendLink: SendLink;
  guards: Guards;
}

export async function createDashboardServices(
  deps: DashboardDeps,
  app: FastifyInstance,
): Promise<DashboardServices> {
  const { config, kv, logger } = deps;
  const now = deps.now ?? Date.now;
  const users = createUserRepository(deps.store);
  await users.init();
  const invitations = createInvitations(deps.store, now);
  await invitations.init();
  const audit = createAuditLog(logger);
  const limits = createAbuseLimits({ kv, now });
  const links = createOneTimeLinks(kv);
  const operators = createOperatorPolicy(config, audit);
  // A reset link pointing at a host an attacker chose would hand them the token.
  const publicUrl = () => {
    if (config.DASHBOARD_PUBLIC_URL) return config.DASHBOARD_PUBLIC_URL.replace(/\/+$/, '');
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.DASHBOARD_PORT;
    const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST;
    return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  };
  return {
    config,
    kv,
    store: deps.store,
    mailer: deps.mailer,
    now,
    users,
    invitations,
    sessions: createSessionStore({ kv, ttlMs: config.SESSION_TTL_MS, now }),
    throttle: createSignInThrottle({ kv, now }),
    limits,
    links,
    audit,
    operators,
    anonymousCsrf: createAnonymousCsrf(config.ADMIN_TOKEN, config.ADMIN_TOKEN_PREVIOUS),
    cookiesFor: cookiePolicy(config),
    publicUrl,
    apiUrl: (config.PUBLIC_API_URL ?? config.GATEWAY_URL).replace(/\/+$/, ''),
    demoVideos: deps.demoVideos ?? [],
    sampleVideoUrl: videoUrl(deps.demoVideos?.[0]?.id ?? DEFAULT_SAMPLE_VIDEO_ID),
    mailsShownIn: config.SMTP_URL ? null : (deps.mailsShownIn ?? "the dashboard's log"),
    flash: createFlashStore(kv),
    decoy: decoyHash(config.PASSWORD_SCRYPT_N),
    sendLink: createLinkMailer({ limits, links, mailer: deps.mailer, publicUrl, logger }),
    guards: createGuards({
      operators,
      config,
      now,
      notAnOperator: async (_request, reply) =>
        reply.page((ctx) => messagePage(ctx, 'Operators only', 'This page is for operators.', 'error'), 403),
    }),
  };
}
