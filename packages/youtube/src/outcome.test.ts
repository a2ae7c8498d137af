import { AppError, Errors } from '@subx/errors';
import { describe, expect, it } from 'vitest';
import { isAnswer, isRefusal } from './observer.ts';
import { BodyTooLargeError, UpstreamHttpError, outcomeOf } from './transport.ts';

describe('the outcome taxonomy of an upstream call', () => {
  it('names each way the platform can refuse us', () => {
    expect(outcomeOf(Errors.upstreamBlocked('bot_check', 'x'))).toBe('bot_check');
    expect(outcomeOf(Errors.upstreamBlocked('captcha', 'x'))).toBe('bot_check');
    expect(outcomeOf(Errors.upstreamBlocked('page_reload', 'x'))).toBe('bot_check');
    expect(outcomeOf(Errors.upstreamBlocked('login_required', 'x'))).toBe('login_required');
    expect(outcomeOf(Errors.upstreamBlocked('po_token', 'x'))).toBe('po_gated_empty');
    expect(outcomeOf(Errors.upstreamBlocked('empty_caption_body', 'x'))).toBe('po_gated_empty');
    expect(outcomeOf(Errors.upstreamBlocked('http_429', 'x'))).toBe('rate_limited');
    expect(outcomeOf(Errors.upstreamBlocked('rate_limited', 'x'))).toBe('rate_limited');
  });

  it('tells a refused client, an oversized answer, a timeout and other errors apart', () => {
    const rejected = new AppError('UPSTREAM_ERROR', 'x', {
      cause: new UpstreamHttpError(400, 'FAILED_PRECONDITION'),
    });
    expect(outcomeOf(rejected)).toBe('client_rejected');
    expect(
      outcomeOf(
        new AppError('UPSTREAM_ERROR', 'x', { cause: new UpstreamHttpError(400, 'INVALID_ARGUMENT') }),
      ),
    ).toBe('error');
    expect(outcomeOf(Errors.upstreamError('x', new BodyTooLargeError('player', 10)))).toBe('too_large');
    expect(outcomeOf(Errors.upstreamTimeout())).toBe('timeout');
    expect(outcomeOf(new Error('socket hang up'))).toBe('error');
  });

  it('answers about the video are the platform working: unplayable, no tracks, not found', () => {
    expect(outcomeOf(Errors.videoUnavailable('dQw4w9WgXcQ', 'private'))).toBe('unplayable');
    expect(outcomeOf(new AppError('NO_SUBTITLES', 'x'))).toBe('no_tracks');
    expect(outcomeOf(new AppError('VIDEO_NOT_FOUND', 'x'))).toBe('ok');
    for (const o of ['ok', 'unplayable', 'no_tracks'] as const) {
      expect(isAnswer(o)).toBe(true);
      expect(isRefusal(o)).toBe(false);
    }
    for (const o of ['bot_check', 'login_required', 'po_gated_empty', 'rate_limited'] as const) {
      expect(isRefusal(o)).toBe(true);
    }
    // about the client or the network: neither a refusal of us nor an answer
    for (const o of ['client_rejected', 'timeout', 'too_large', 'error'] as const) {
      expect(isRefusal(o) || isAnswer(o)).toBe(false);
    }
  });
});
