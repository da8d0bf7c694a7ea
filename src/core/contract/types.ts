// The typed half of the contract. `sidekiq-bridge contract gen` writes a
// module that augments `ContractTypes` (declare module "sidekiq-bridge") with
// each class's argument tuple; `client.job(name)` and `client.activeJob(name)`
// then take only those names, with those arguments. Without that module
// nothing changes: any class name, any arguments.
import type { RubyJsonValue } from "../wire/ruby-json.js";

/**
 * Filled by the module `sidekiq-bridge contract gen` writes: `jobs` (Sidekiq
 * class -> argument tuple), `activeJobs` (ActiveJob class -> argument
 * tuple, keywords last through `aj.kwargs`), `mailers` (mailer -> action ->
 * argument tuple) and `globalIdApps` (contract app -> its GlobalID app).
 * Empty by default.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ContractTypes {}

type Section<K extends string> = ContractTypes extends { [P in K]: infer T } ? T : Record<never, never>;

/** The Sidekiq job classes the generated types declare (none without them). */
export type ContractJobName = keyof Section<"jobs"> & string;
/** The ActiveJob classes the generated types declare (none without them). */
export type ContractActiveJobName = keyof Section<"activeJobs"> & string;
/** The argument tuple of a declared Sidekiq job class. */
export type ContractJobArgs<K extends ContractJobName> = Section<"jobs">[K] extends infer A extends RubyJsonValue[]
  ? A
  : never;
/** The argument tuple of a declared ActiveJob class. */
export type ContractActiveJobArgs<K extends ContractActiveJobName> = Section<"activeJobs">[K] extends infer A extends
  unknown[]
  ? A
  : never;
/** The mailers the generated types declare (none without them). */
export type ContractMailerName = keyof Section<"mailers"> & string;
/** A declared mailer's actions: action -> the argument tuple of `deliverLater(action, args)`. */
export type ContractMailerActions<K extends ContractMailerName> = Section<"mailers">[K] extends infer M extends Record<
  string,
  unknown[]
>
  ? M
  : never;
/** Any class name while no types are generated; none once they are (an unknown class is a type error). */
export type UndeclaredClassName = ContractTypes extends { jobs: unknown } ? never : string;
/** The apps whose contract records a GlobalID app, for `client.record`'s `app` (any name without generated types). */
export type ContractAppName = ContractTypes extends { globalIdApps: infer G } ? keyof G & string : string;
