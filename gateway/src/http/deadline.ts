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

/** A request's deadline; its AbortController is made only when someone asks for the signal. */
class RequestDeadline implements DeadlineState {
  readonly deadlineMs: number;
  #controller: AbortController | null = null;
  #reason: AppError | null = null;
  constructor(deadlineMs: number) {
    this.deadlineMs = deadlineMs;
  }
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#reason) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }
  abort(reason: AppError): void {
    if (this.#reason) return;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

/** The request's deadline slot (a symbol-keyed property, not a WeakMap entry per request: see client-ip.ts). */
const DEADLINE = Symbol('gatehouse.deadline');
type WithDeadline = Request & { [DEADLINE]?: DeadlineState };

/** The deadline of `req` set by {@link deadline}, or undefined when the middleware did not run. */
export function requestDeadline(req: Request): DeadlineState | undefined {
  return (req as WithDeadline)[DEADLINE];
}

/**
 * Starts the request deadline. When it passes before a response was sent, answers 504
 * `deadline_exceeded` (GraphQL-shaped on /graphql) and aborts the request's signal so handlers can
 * stop; handlers must check `res.headersSent` before writing late. The timer is cleared when the
 * response closes (after it finished, or when the connection went away: then the signal aborts with
 * `cancelled`).
 */
export function deadline(options: { ms?: number } = {}): RequestHandler {
  const ms = options.ms ?? DEFAULT_DEADLINE_MS;
  return (req, res, next) => {
    const state = new RequestDeadline(Date.now() + ms);
    (req as WithDeadline)[DEADLINE] = state;
    const timer = setTimeout(() => {
      const err = new AppError('deadline_exceeded', DEADLINE_MESSAGE, { reason: 'http_deadline' });
      state.abort(err);
      if (!res.headersSent) sendErrorFor(req, res, err);
    }, ms);
    timer.unref();
    // a response closes once: a plain listener, without a once-wrapper to build and remove per request
    res.on('close', () => {
      clearTimeout(timer);
      if (!res.writableFinished) state.abort(new AppError('cancelled', 'request cancelled'));
    });
    next();
  };
}
