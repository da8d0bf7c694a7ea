// Sidekiq's error handler type (`config.error_handlers`): what a user or an
// add-on registers; job-watch.ts calls every one around each job run.
import type { LogContext } from "../logging/logger.js";

/** Sidekiq's error handler: `(error, context)`, context like `{ context: "Job raised exception", job }`. */
export type ErrorHandler = (error: unknown, context: LogContext) => void | Promise<void>;
