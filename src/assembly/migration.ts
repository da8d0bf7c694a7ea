// sidekiq-bridge/migration: moving a fleet queue by queue, and back (docs/MIGRATION.md).
// The audit (src/tools/migration/) takes the add-ons' checks as an argument;
// this entry gives it the registry's, as `migrate audit` does.
import type { Redis } from "ioredis";
import {
  auditQueues as auditWith,
  collectHandlers as collectWith,
  emptyHandlers,
  type AuditOptions,
  type AuditReport,
  type NodeHandlers,
} from "../tools/migration/audit.js";
import { auditAddons } from "./audits.js";

// What each function reports is reached through it (`Awaited<ReturnType<typeof moveJobs>>`).
export type { AuditOptions } from "../tools/migration/audit.js";
export { moveJobs, type MoveOptions } from "../tools/migration/move.js";
export { migrateTimestamps, type TimestampOptions } from "../tools/migration/convert-timestamps.js";
export { exportToFile, exportToStream, type ExportOptions } from "../tools/migration/dump.js";
export {
  importFromFile,
  importFromStream,
  ImportRefusedError,
  type ImportOptions,
} from "../tools/migration/restore.js";
export { ExportFormatError } from "../tools/migration/export-format.js";

/** Reads the queues and job sets (read-only) and judges every queue. */
export function auditQueues(redis: Redis, o: AuditOptions = {}): Promise<AuditReport> {
  return auditWith(redis, o, auditAddons());
}

/**
 * Records what a handlers module registers, without a Redis connection: the
 * same module shape `sidekiq-bridge worker -r` loads (a default-export
 * function receiving the Worker, or an object of handlers by class name).
 * Calls other than register/registerActiveJob (use, onDeath, ...) are accepted
 * and ignored.
 */
export function collectHandlers(moduleExport: unknown, into: NodeHandlers = emptyHandlers()): Promise<NodeHandlers> {
  return collectWith(moduleExport, into, auditAddons());
}
