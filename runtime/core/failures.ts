/**
 * What becomes of a handler's unexpected failure: the client is answered
 * with the table's Internal error and never sees what went wrong, and the
 * server hears of it here. By default one JSON line on stderr per failure;
 * a `logger` (pino, or any object with its `error(obj, msg)`) or an
 * `onError` hook takes its place.
 */
import type { Binding } from "./call-context.js";

/** Where an unexpected failure happened. */
export interface FailureInfo {
  readonly binding: Binding;
  /** The RPC name, e.g. `SendMessage`. */
  readonly method: string;
  /** The JSON-RPC id, or the request's `x-request-id` header or metadata; undefined when there is none. */
  readonly requestId?: string | undefined;
}

/** Called once per unexpected handler failure (a throw that is not an RpcError, a response that cannot be encoded). */
export type OnError = (error: unknown, info: FailureInfo) => void;

/** pino's shape: `logger.error({ err, ...fields }, message)`. Any object with such an `error` method will do. */
export interface Logger {
  error(fields: object, message?: string): void;
}

/** Error fields a JSON line can hold: an Error's name, message and stack (pino's `err` serializer writes the same). */
export function errorFields(error: unknown): { readonly type: string; readonly message: string; readonly stack?: string | undefined } {
  if (error instanceof Error) return { type: error.name, message: error.message, stack: error.stack };
  return { type: typeof error, message: String(error) };
}

/** The default logger: one JSON line per failure on stderr (console.error: also where there is no process, a worker say). */
export const jsonLineLogger: Logger = {
  error(fields, message) {
    const { err, ...rest } = fields as { err?: unknown };
    console.error(JSON.stringify({ level: "error", time: new Date().toISOString(), msg: message, ...rest, ...(err === undefined ? {} : { err: errorFields(err) }) }));
  },
};

/** The reporter of an endpoint: its `onError`, else its `logger` (default: jsonLineLogger) told "handler failed". */
export function failureReporter(options: { readonly onError?: OnError | undefined; readonly logger?: Logger | undefined }): OnError {
  if (options.onError !== undefined) return options.onError;
  const logger = options.logger ?? jsonLineLogger;
  return (error, info) => logger.error({ err: error, ...info }, "handler failed");
}
