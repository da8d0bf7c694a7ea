// The plug-in interface: how an add-on (sidekiq-cron, sidekiq-unique-jobs,
// sidekiq-throttled...) joins a Node worker without the core knowing it, the
// way a gem attaches to Sidekiq through `Sidekiq.configure_server`. An entry
// (in src/assembly/registry.ts) is data: its name, flag, markers, dashboard
// tab and commands, whose pages and modules load on first use. What runs
// lives beside it and loads only where used: its install
// (src/assembly/installers.ts, the worker's) and its audit check
// (src/assembly/audits.ts, `migrate audit`'s). The worker installs every
// add-on that is turned on, handing it the seams below. docs/ADDONS.md walks
// through one.
import type { ClientMiddleware } from "../core/client/middleware.js";
import type { ResolvedOptions } from "../core/config/resolve.js";
import type { Logger } from "../core/logging/logger.js";
import type { WorkerEventName, WorkerListener } from "../core/server/events.js";
import type { JobGate } from "../core/server/job-gate.js";
import type { ErrorHandler } from "../core/server/error-handler.js";
import type { ServerMiddleware } from "../core/server/processor.js";
import type { ServiceFactory } from "../core/server/service.js";
import type { DeathHandler } from "../core/server/types.js";
import type { CommandModule } from "../tools/cli/extension.js";
import type { WebTab } from "../tools/web/extension.js";

/**
 * What an add-on may plug into, once, while the worker is assembled: the
 * worker's runtime (server/config.ts, Sidekiq::Config) seen through this
 * interface, the object the launcher and its processors hold.
 */
export interface ServerConfig {
  /** The worker's resolved, frozen config. */
  readonly options: ResolvedOptions;
  readonly logger: Logger;
  /** Adds server middleware (Sidekiq's `config.server_middleware.add`). */
  useServer(mw: ServerMiddleware): void;
  /** Adds client middleware to the worker's own client: what pollers and services push goes through it. */
  useClient(mw: ClientMiddleware): void;
  /** Sidekiq's `death_handlers`. */
  onDeath(handler: DeathHandler): void;
  /** Sidekiq's `error_handlers`. */
  onError(handler: ErrorHandler): void;
  /** Lifecycle and job events (Sidekiq's `config.on(:startup)` and friends). */
  on<E extends WorkerEventName>(event: E, fn: WorkerListener<E>): void;
  /** A service run beside the managers (a poller): started with the worker, stopped at quiet. */
  service(factory: ServiceFactory): void;
  /** A gate asked before each job runs: run it, hand it back, or it was moved (see server/job-gate.ts). */
  gate(gate: JobGate): void;
  /** Whether a class is registered as an ActiveJob class (routed by `wrapped`). */
  isActiveJobClass(className: string): boolean;
}

/**
 * Plugs an add-on into a worker; `option` is its WorkerOptions value (`true`
 * when on by default). It lives in the add-on's install.ts, which only the
 * worker loads (src/assembly/installers.ts): its entry stays data.
 */
export type AddonInstaller<Option> = (config: ServerConfig, option: Exclude<Option, false | undefined>) => void;

/** An add-on: one folder, one entry in src/assembly/registry.ts. `Option` is what its WorkerOptions entry takes. */
export interface Addon<Option = unknown, Name extends string = string> {
  /** Its option's name: in WorkerOptions, in a handlers module, and the stem of its CLI flag. */
  readonly name: Name;
  /** The gem it speaks for, for log lines and audit reasons. */
  readonly gem: string;
  /** Whether it runs when its option is not given (cron does: it idles without cron jobs). */
  readonly onByDefault: boolean;
  /**
   * The command-line flag of `sidekiq-bridge worker`: without `value`, a switch
   * that turns the add-on off (when on by default) or on; with `value` (its
   * placeholder, e.g. "GEM"), a flag whose value `parse` turns into the option.
   */
  readonly flag?: {
    readonly name: string;
    readonly help: string;
    readonly value?: string;
    parse?(value: string): Option;
  };
  /** How a user turns it on, for log lines and audit reasons ("the worker option uniqueJobs: true (--unique-jobs 8)"). */
  readonly enable?: string;
  /**
   * Top-level payload fields the gem writes that make a job its own: a worker
   * that does not run this add-on hands such a job back to its queue (or,
   * with `runWithout`, runs it), saying `what` the job carries and what
   * running it without the add-on `breaks`.
   */
  readonly markers?: ReadonlyArray<{ readonly field: string; readonly what: string; readonly breaks: string }>;
  /** Other top-level payload fields the gem writes (so `migrate audit` does not list them as unknown). */
  readonly payloadKeys?: readonly string[];
  /**
   * The name of its server middleware in the worker's chain (src/core/middleware/chain.ts
   * `named`): a user who adds it by hand (`worker.use(...)`) runs the add-on,
   * as Sidekiq's `server_middleware.exists?` tells.
   */
  readonly middleware?: string;
  /** Its dashboard tab: the navigation link and its routes (pages loaded on first use). */
  readonly web?: WebTab;
  /** Commands it adds to `sidekiq-bridge`, each loaded only when run. */
  readonly commands?: Readonly<Record<string, () => Promise<CommandModule>>>;
}
