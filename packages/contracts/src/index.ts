export * as commonV1 from './gen/subx/common/v1/video.ts';
export * as extractorV1 from './gen/subx/extractor/v1/extractor_service.ts';
export * as commentsV1 from './gen/subx/comments/v1/comments_service.ts';
export * as aiV1 from './gen/subx/ai/v1/ai_service.ts';
export * as billingV1 from './gen/subx/billing/v1/billing_service.ts';
export * as eventsV1 from './gen/subx/events/v1/envelope.ts';
export * as extractJobV1 from './gen/subx/events/v1/extract_job.ts';
export * as creditUsageV1 from './gen/subx/events/v1/credit_usage.ts';
