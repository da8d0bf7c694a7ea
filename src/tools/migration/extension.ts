// What an add-on's `migrate audit` check builds on: the one module of the
// migration tool an add-on imports (docs/ADDONS.md). A check (AuditCheck)
// counts what it needs on each job and class, and judges classes and queues
// with the report's types; the audit runs the checks it is given.
export type { AuditCheck, Findings, JobPlace, NodeAddons, QueueJudgeContext } from "./audit-check.js";
export type { ClassUsage, CronFeed, NodeHandlers, QueueAudit } from "./audit-report.js";
