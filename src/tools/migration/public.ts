// sidekiq-bridge/migration: moving a fleet queue by queue, and back (docs/MIGRATION.md).
export type { Progress, ProgressFn } from "./stored-jobs.js";
export {
  auditQueues,
  collectHandlers,
  type NodeHandlers,
  type AuditOptions,
  type AuditReport,
  type QueueAudit,
  type Verdict,
} from "./audit.js";
export { moveJobs, type MoveOptions, type MoveReport, type MoveLocationReport } from "./move.js";
export {
  migrateTimestamps,
  type TimestampOptions,
  type TimestampReport,
  type TimestampKeyReport,
  type TimestampTarget,
} from "./convert-timestamps.js";
export { exportToFile, exportToStream, type ExportOptions, type ExportSummary } from "./dump.js";
export {
  importFromFile,
  importFromStream,
  ImportRefusedError,
  type ImportOptions,
  type ImportSummary,
} from "./restore.js";
export { ExportFormatError } from "./export-format.js";
