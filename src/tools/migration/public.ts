// sidekiq-bridge/migration: moving a fleet queue by queue, and back (docs/MIGRATION.md).
// What each function reports is reached through it (`Awaited<ReturnType<typeof moveJobs>>`).
export { auditQueues, collectHandlers, type AuditOptions } from "./audit.js";
export { moveJobs, type MoveOptions } from "./move.js";
export { migrateTimestamps, type TimestampOptions } from "./convert-timestamps.js";
export { exportToFile, exportToStream, type ExportOptions } from "./dump.js";
export { importFromFile, importFromStream, ImportRefusedError, type ImportOptions } from "./restore.js";
export { ExportFormatError } from "./export-format.js";
