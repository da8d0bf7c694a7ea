// The type of `client.unchecked`: the client with its contract's names and
// arguments not enforced (its own file, so client.ts stays one concern's size).
import type { RubyJsonValue } from "../wire/ruby-json.js";
import type { ActiveJobDefinition, ActiveJobOptions } from "./activejob.js";
import type { Client } from "./client.js";
import type { JobDefinition } from "./job.js";
import type { MailerActions, MailerDefinition, MailerOptions } from "./mailer.js";
import type { JobOptions } from "./normalize.js";

/** `client.unchecked`: pushes skip the contract, and job names are not limited to the generated types. */
export type UncheckedClient = Omit<Client, "job" | "activeJob" | "mailer"> & {
  job<A extends RubyJsonValue[] = RubyJsonValue[]>(className: string, classOptions?: JobOptions): JobDefinition<A>;
  activeJob<A extends unknown[] = unknown[]>(jobClass: string, options?: ActiveJobOptions): ActiveJobDefinition<A>;
  mailer<M extends MailerActions = MailerActions>(mailerClass: string, options?: MailerOptions): MailerDefinition<M>;
};
