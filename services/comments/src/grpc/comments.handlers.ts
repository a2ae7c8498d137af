import { commentsV1 } from '@subx/contracts';
import { defineService } from '@subx/service-kit';
import type { ServiceRegistration } from '@subx/service-kit';
import type { CommentsService } from '../comments-service.ts';

/** gRPC ↔ use-case mapping for subx.comments.v1.CommentsService. */
export function commentsServiceRegistration(service: CommentsService): ServiceRegistration {
  return defineService(commentsV1.CommentsServiceService, {
    getComments: (req) => service.getComments(req),
  });
}
