/**
 * A logger for servers whose handlers fail on purpose: it keeps what the
 * server reported ("handler failed", with the method and the error), so a
 * test checks the failure was reported, and nothing reaches the test output.
 */
export interface ReportLog {
  /** Takes pino's `error(fields, message)` shape, as the servers' `logger` option does. */
  readonly logger: { error(fields: object, message?: string): void };
  /** The reports so far: the message logged, binding, method, request id (when the call had one) and the error's message. */
  readonly reports: Report[];
}

export interface Report {
  readonly logged: string | undefined;
  readonly binding: unknown;
  readonly method: unknown;
  readonly requestId?: unknown;
  readonly message: unknown;
}

export function createReportLog(): ReportLog {
  const reports: ReportLog["reports"] = [];
  return {
    reports,
    logger: {
      error(fields, logged) {
        const f = fields as { binding?: unknown; method?: unknown; requestId?: unknown; err?: unknown };
        const message = f.err instanceof Error ? f.err.message : f.err;
        reports.push({ logged, binding: f.binding, method: f.method, ...(f.requestId === undefined ? {} : { requestId: f.requestId }), message });
      },
    },
  };
}
