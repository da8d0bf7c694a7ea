// Rails mailers from Node: what `UserMailer.with(params).welcome(user).deliver_later`
// enqueues, an ActionMailer::MailDeliveryJob whose arguments name the mailer,
// the action and "deliver_now", then keywords params: (parameterized mailers
// only) and args: (the action's arguments, its own keywords last).
import { ActiveJobDefinition, aj, type ActiveJobOptions, type ActiveJobSet, type Enqueued } from "./activejob.js";
import type { Client } from "./client-types.js";

/** A mailer's actions: action name -> the argument tuple of `deliverLater(action, args)`. */
export type MailerActions = Record<string, unknown[]>;

/** Options of a mailer's deliveries: ActiveJob's, with Rails' defaults (queue "default", timezone "UTC"). */
export type MailerOptions = ActiveJobOptions;

/** Options of one `deliverLater`: `UserMailer.with(params)` and `deliver_later(wait:, wait_until:, queue:, priority:)`. */
export interface DeliverLaterOptions extends ActiveJobSet {
  /** The parameterized mailer's `params` (a Hash with Symbol keys in Ruby). */
  params?: Record<string, unknown>;
}

/** A Rails mailer class (`client.mailer("UserMailer")`), delivered by the Rails app's own ActiveJob. */
export class MailerDefinition<M extends MailerActions = MailerActions> {
  private readonly job: ActiveJobDefinition<unknown[]>;

  constructor(
    client: Client,
    readonly mailerClass: string,
    options: MailerOptions = {},
  ) {
    // A Rails app always has a Time.zone ("UTC" unless configured), so its jobs carry it.
    this.job = new ActiveJobDefinition(client, "ActionMailer::MailDeliveryJob", { timezone: "UTC", ...options });
  }

  /** `Mailer.with(params).action(*args).deliver_later(set)`; keywords of the action go last, as `aj.kwargs({...})`. */
  deliverLater<K extends keyof M & string>(
    action: K,
    args: M[K],
    options: DeliverLaterOptions = {},
  ): Promise<Enqueued> {
    const { params, ...set } = options;
    return this.job.set(set).performLater(...this.arguments(action, args, params));
  }

  /** The job's `arguments` before ActiveJob serializes them. */
  arguments(action: string, args: readonly unknown[], params?: Record<string, unknown>): unknown[] {
    const kw = params === undefined ? { args } : { params: aj.symbolKeys(params), args };
    return [this.mailerClass, action, "deliver_now", aj.kwargs(kw)];
  }
}
