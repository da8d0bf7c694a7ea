// The Cron tab's own options, as the dashboard's `extensions: { cron: ... }`
// hands them over (the dashboard never reads them).

/** The Cron tab's options (`extensions: { cron: ... }`). */
export interface CronWebSettings {
  /**
   * sidekiq-cron's `available_namespaces` given as an Array. Default: every
   * `cron_jobs:<namespace>` key found by SCAN (`:auto`), which walks the whole
   * keyspace on each visit.
   */
  namespaces?: string[];
}

export function cronWebSettings(raw: unknown): CronWebSettings {
  if (raw === undefined) return {};
  const namespaces = (raw as CronWebSettings | null)?.namespaces;
  if (
    typeof raw !== "object" ||
    raw === null ||
    (namespaces !== undefined && (!Array.isArray(namespaces) || namespaces.some((n) => typeof n !== "string")))
  )
    throw new Error(`the Cron tab takes { namespaces?: string[] }, not ${JSON.stringify(raw)}`);
  return namespaces ? { namespaces: [...namespaces] } : {};
}
