// The soak report's account of its lost jobs: how many each cause lost, then
// every job with its evidence (chaos/soak-explain.ts finds both).
import type { Cause, LostJob } from "./soak-explain.js";

const CAUSES: ReadonlyArray<[Cause, string]> = [
  ["ruby-basic-fetch", "lost by Ruby's basic fetch (BRPOP)"],
  ["ruby-scheduled-poller", "lost by Ruby's scheduled poller"],
  ["unexplained", "lost by the bridge, or unexplained"],
  ["still-pending", "not lost: still waiting in Redis at the end"],
];

export const byCause = (jobs: readonly LostJob[], cause: Cause) => jobs.filter((j) => j.cause === cause).length;

/** One line for the summary table: the lost jobs split by cause. */
export const lostSplit = (jobs: readonly LostJob[]) =>
  CAUSES.map(([c, label]) => `${label}: ${byCause(jobs, c)}`).join("; ");

export function lostJobsReport(jobs: readonly LostJob[], unsent: number): string[] {
  return [
    "## Lost jobs explained",
    "",
    "| | |",
    "| --- | --- |",
    ...CAUSES.map(([c, label]) => `| ${label} | ${byCause(jobs, c)} |`),
    `| jobs run that the producer did not count as sent (a push reported failed that was written) | ${unsent} |`,
    "",
    ...jobs.flatMap((j) => [
      `- \`${j.jid}\` ${j.kind}, its push returned at ${j.pushedMin.toFixed(3)} min; ${j.ran}; now: ${j.where}; fault: ${j.fault}.`,
      `  **${CAUSES.find(([c]) => c === j.cause)![1]}**: ${j.evidence[0]}.`,
      ...j.evidence.slice(1).map((e) => `  - ${e}`),
    ]),
    "",
  ];
}
