/** @module gateway/http/deadline The per-request server deadline (behaviour.md §0.1: 30 s → 504 `deadline_exceeded`). */
import type { Request, RequestHandler } from 'express';
import { AppError } from '@gatehouse/errors';
import { sendErrorFor } from './errors.ts';

export const DEFAULT_DEADLINE_MS = 30_000;
export const DEADLINE_MESSAGE = 'deadline exceeded';

interface DeadlineState {
  /** ms since the epoch; goes into CallContext.deadlineMs */
  readonly deadlineMs: number;
  /** aborted when the deadline passes or the client goes away: pass it to outbound calls */
  readonly signal: AbortSignal;
}

const STATE = new WeakMap<Request, DeadlineState>();

/** The deadline of `req` set by {@link deadline}, or undefined when the middleware did not run. */
export function requestDeadline(req: Request): DeadlineState | undefined {
  return STATE.get(req);
}

/**
 * Starts the request deadline. When it passes before a response was sent, answers 504
 * `deadline_exceeded` (GraphQL-shaped on /graphql) and aborts the request's signal so handlers can
 * stop; handlers must check `res.headersSent` before writing late. The timer is cleared when the
 * response finishes or the connection closes.
 */
export function deadline(options: { ms?: number } = {}): RequestHandler {
  const ms = options.ms ?? DEFAULT_DEADLINE_MS;
  return (req, res, next) => {
    const controller = new AbortController();
    STATE.set(req, { deadlineMs: Date.now() + ms, signal: controller.signal });
    const timer = setTimeout(() => {
      const err = new AppError('deadline_exceeded', DEADLINE_MESSAGE, { reason: 'http_deadline' });
      controller.abort(err);
      if (!res.headersSent) sendErrorFor(req, res, err);
    }, ms);
    timer.unref();
    const done = (): void => {
      clearTimeout(timer);
      if (!res.writableFinished && !controller.signal.aborted) {
        controller.abort(new AppError('cancelled', 'request cancelled'));
      }
    };
    res.once('finish', () => clearTimeout(timer));
    res.once('close', done);
    next();
  };
}
