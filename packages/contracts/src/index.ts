export * as commonV1 from './gen/subx/common/v1/video.ts';
export * as extractorV1 from './gen/subx/extractor/v1/extractor_service.ts';
export * as commentsV1 from './gen/subx/comments/v1/comments_service.ts';
export * as aiV1 from './gen/subx/ai/v1/ai_service.ts';
export * as billingV1 from './gen/subx/billing/v1/billing_service.ts';
export * as jobsV1 from './gen/subx/jobs/v1/jobs_service.ts';
export * as eventsV1 from './gen/subx/events/v1/envelope.ts';
export * as extractJobV1 from './gen/subx/events/v1/extract_job.ts';
export * as creditUsageV1 from './gen/subx/events/v1/credit_usage.ts';
export * as requestUsageV1 from './gen/subx/events/v1/request_usage.ts';
export * as jobLifecycleV1 from './gen/subx/events/v1/job_lifecycle.ts';
export * as watchLifecycleV1 from './gen/subx/events/v1/watch_lifecycle.ts';
export * as auditEventV1 from './gen/subx/events/v1/audit_event.ts';
export * as accountDeletedV1 from './gen/subx/events/v1/account_deleted.ts';
export { TOPICS, CONSUMER_GROUPS } from './topics.ts';
export type { BusName } from './topics.ts';
export { CLOUD_EVENT_KINDS, PROTOBUF_CONTENT_TYPE, cloudEventHeaders, envelopeOf } from './cloud-events.ts';
export type { CloudEventFacts, CloudEventKind } from './cloud-events.ts';
export { eventDescriptors, eventMessageType, topicSchemas } from './event-schemas.ts';
export type { TopicKey, TopicSchema } from './event-schemas.ts';

/**
 * The gRPC health name (grpc.health.v1) under which the extractor says whether the video platform
 * answers: NOT_SERVING while its requests get no answer at all (DNS, refused, reset, TLS,
 * timeout). The gateway's /health reports it as `platform: "unreachable"` and `degraded`.
 */
export const PLATFORM_HEALTH_NAME = 'subx.platform';
