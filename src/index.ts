// sidekiq-bridge: Node.js in a Ruby Sidekiq fleet, on the same Redis.
//
// The package's public API: every name here is a promise kept across minor
// releases (see CHANGELOG.md). Each is listed by name, never `export *`, so an
// internal module can change without breaking users. docs/API.md is generated
// from this file (npm run api:docs); a unit test fails when they differ.
// The wire codec is its own entry point, "sidekiq-bridge/wire"; the web
// dashboard is "sidekiq-bridge/web".

// Client: enqueue from Node, for Ruby (or Node) workers.
export { Client, type ClientOptions } from "./core/client/client.js";
export { ContractError, type ContractMode, type ContractOptions } from "./core/contract/checker.js";
export { readContractFile, parseContract, type JobContract, type JobClass } from "./tools/contract/document.js";
export type { HandlerContract, ArgsSchema } from "./core/contract/handlers.js";
export type {
  ContractTypes,
  ContractJobName,
  ContractJobArgs,
  ContractActiveJobName,
  ContractActiveJobArgs,
  ContractMailerName,
  ContractMailerActions,
  UndeclaredClassName,
} from "./core/contract/types.js";
export type { UncheckedClient } from "./core/client/client.js";
export type { BulkItem } from "./core/client/client-types.js";
export type { PushItem } from "./core/client/normalize.js";
export { JobDefinition, type SetOptions, type BulkOptions } from "./core/client/job.js";
export type { JobOptions, JobHash } from "./core/client/normalize.js";
export type { ClientMiddleware, ClientMiddlewareContext } from "./core/client/middleware.js";
export type { StrictArgsMode } from "./core/client/strict-args.js";
export {
  aj,
  AjValue,
  type AjKwargs,
  ActiveJobDefinition,
  ActiveJobSerializationError,
  type ActiveJobOptions,
  type ActiveJobSet,
  type Enqueued,
} from "./core/client/activejob.js";
export {
  MailerDefinition,
  type MailerActions,
  type MailerOptions,
  type DeliverLaterOptions,
} from "./core/client/mailer.js";
export {
  SidekiqArgumentError,
  DialectDetectionError,
  BulkPushError,
  PushUncertainError,
} from "./core/client/errors.js";
export type { RedisSource, RedisConnectionOptions } from "./core/redis/connection.js";
export { RedisUnavailableError, RedisOutOfMemoryError } from "./core/redis/availability.js";
export { RedisPermissionError, BRIDGE_COMMANDS, bridgeAclRules } from "./core/redis/acl.js";
export type { Dialect, DialectLike } from "./core/wire/dialect.js";

// Worker: process Sidekiq jobs in Node.
export { Worker, type WorkerOptions } from "./assembly/worker.js";
export type { StopResult } from "./core/server/stop-result.js";
export {
  JobRetrySkip,
  type JobContext,
  type JobHandler,
  type HandlerOptions,
  type RetryInResult,
  type DeathHandler,
  type FailureSource,
} from "./core/server/types.js";
export {
  UnknownJobClassError,
  type ServerMiddleware,
  type ServerMiddlewareContext,
  type UnknownClassPolicy,
} from "./core/server/processor.js";
export { consoleLogger, type Logger } from "./core/logging/logger.js";
export { GlobalIdRef, AjSerialized, AjDuration, AjRange, AjModule } from "./core/wire/activejob-values.js";
export {
  arrayEnumerator,
  type IterableJob,
  type IterableOptions,
  type IterationContext,
  type IterationPair,
  type IterationSource,
} from "./core/iterable/iterable.js";
export {
  cancelIterableJob,
  iterationProgress,
  IterationStateError,
  type IterationProgress,
} from "./core/iterable/iterable-state.js";

// API: Sidekiq's Ruby API (Sidekiq::Stats, Queue, sets, processes, metrics) for Node.
export { SidekiqApi, type ApiOptions } from "./core/api/sidekiq-api.js";
export type { StatsSnapshot, QueueSummary } from "./core/api/stats.js";
export { StatsHistory, type DayCount } from "./core/api/history.js";
export {
  MetricsQuery,
  METRICS_PERIODS,
  type MetricsResult,
  type JobMetrics,
  type Granularity,
} from "./core/api/metrics-query.js";
export { HISTOGRAM_LABELS } from "./core/wire/metrics-keys.js";
export { Queue, type QueueEntry } from "./core/api/queue.js";
export type { JobView, JobFilter } from "./core/api/job-entry.js";
export { SortedJobSet } from "./core/api/sorted-set.js";
export { ScheduledSet, RetrySet, DeadSet } from "./core/api/job-sets.js";
export {
  JobSetError,
  type JobSetName,
  type SortedEntry,
  type BulkResult,
  type EntryAction,
  type FilteredPage,
} from "./core/api/sorted-entry.js";
export type { DeadSetConfig } from "./core/api/morgue.js";
export {
  BULK_BATCH_SIZE,
  MAX_BULK_BATCH_SIZE,
  BulkActionError,
  type BulkActionOptions,
  type BulkSelection,
  type BulkSummary,
} from "./core/api/bulk-action.js";
export { ProcessSet } from "./core/api/process-set.js";
export {
  ProcessNotFoundError,
  EmbeddedProcessError,
  type ProcessInfo,
  type RunningWork,
  type RemoteSignalName,
  type Runtime,
} from "./core/api/process-hash.js";
