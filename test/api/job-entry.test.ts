import { describe, expect, it } from "vitest";
import { displayClassOf, globEscape, matchesFilter, parseStored, viewOf } from "../../src/core/api/job-entry.js";
import { parseWork, processFromHash } from "../../src/core/api/process-hash.js";
import { ownDialect } from "../../src/core/api/sidekiq-api.js";
import { decrementRetryCount, JobSetError } from "../../src/core/api/sorted-entry.js";
import { JobRecord } from "../../src/core/wire/job-record.js";

const dc = (json: string) => displayClassOf(parseStored(json));

describe("display_class (api.rb JobRecord#display_class)", () => {
  it("is the class for plain jobs", () => {
    expect(dc('{"class":"HardJob","args":[]}')).toBe("HardJob");
  });
  it("unwraps both ActiveJob wrapper names by `wrapped`, else args[0]", () => {
    expect(
      dc('{"class":"ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper","wrapped":"ReindexJob","args":[{}]}'),
    ).toBe("ReindexJob");
    expect(dc('{"class":"Sidekiq::ActiveJob::Wrapper","wrapped":"ReindexJob","args":[{}]}')).toBe("ReindexJob");
    expect(dc('{"class":"Sidekiq::ActiveJob::Wrapper","args":["OldStyleJob"]}')).toBe("OldStyleJob");
  });
  it("shows ActionMailer jobs as Mailer#method", () => {
    const j =
      '{"class":"Sidekiq::ActiveJob::Wrapper","wrapped":"ActionMailer::MailDeliveryJob","args":[{"job_class":"ActionMailer::MailDeliveryJob","arguments":["UserMailer","welcome","deliver_now",{"args":[1]}]}]}';
    expect(dc(j)).toBe("UserMailer#welcome");
  });
  it("prefers an explicit display_class, and does not unwrap a class merely named like a wrapper", () => {
    expect(dc('{"class":"Sidekiq::ActiveJob::Wrapper","display_class":"Shown","wrapped":"X","args":[]}')).toBe("Shown");
    expect(dc('{"class":"MyWrapper","wrapped":"X","args":[]}')).toBe("MyWrapper");
  });
  it("is undefined for text that is not a JSON object (Ruby shows {})", () => {
    expect(dc("oops")).toBeUndefined();
    expect(viewOf("oops")).toMatchObject({ raw: "oops", record: null, jid: undefined });
  });
});

describe("filters", () => {
  const aj = viewOf(
    '{"class":"Sidekiq::ActiveJob::Wrapper","wrapped":"ReindexJob","queue":"low","args":[{}],"jid":"j1"}',
  );
  it("match the display class or the stored class, and the queue", () => {
    expect(matchesFilter(aj, { className: "ReindexJob" })).toBe(true);
    expect(matchesFilter(aj, { className: "Sidekiq::ActiveJob::Wrapper" })).toBe(true);
    expect(matchesFilter(aj, { className: "HardJob" })).toBe(false);
    expect(matchesFilter(aj, { queue: "low" })).toBe(true);
    expect(matchesFilter(aj, { className: "ReindexJob", queue: "default" })).toBe(false);
    expect(matchesFilter(aj, {})).toBe(true);
  });
  it("escape glob characters of a jid used in ZSCAN MATCH", () => {
    expect(globEscape("a*b?c[d]e\\")).toBe("a\\*b\\?c\\[d\\]e\\\\");
  });
});

describe("retry_count -= 1 (SortedEntry#retry)", () => {
  const after = (json: string) => {
    const r = JobRecord.parse(json);
    decrementRetryCount(r);
    return r.toString();
  };
  it("decrements an Integer in place, every other byte unchanged", () => {
    expect(after('{"a":1.0,"retry_count":3,"z":[18446744073709551616]}')).toBe(
      '{"a":1.0,"retry_count":2,"z":[18446744073709551616]}',
    );
  });
  it("takes 0 to -1 as Ruby does, keeps a Float a Float, and a big Integer exact", () => {
    expect(after('{"retry_count":0}')).toBe('{"retry_count":-1}');
    expect(after('{"retry_count":2.0}')).toBe('{"retry_count":1.0}');
    expect(after('{"retry_count":18446744073709551616}')).toBe('{"retry_count":18446744073709551615}');
  });
  it("leaves absent, null and false alone; refuses what Ruby cannot subtract from", () => {
    expect(after('{"x":1}')).toBe('{"x":1}');
    expect(after('{"retry_count":null}')).toBe('{"retry_count":null}');
    expect(after('{"retry_count":false}')).toBe('{"retry_count":false}');
    expect(() => after('{"retry_count":"3"}')).toThrow(JobSetError);
  });
});

describe("the dialect a pushed job keeps when no Ruby process is live", () => {
  it("is the unit its times already use", () => {
    expect(ownDialect(JobRecord.parse('{"created_at":1795303590.5}'))).toBe(7);
    expect(ownDialect(JobRecord.parse('{"created_at":1795303590500}'))).toBe(8);
    expect(ownDialect(JobRecord.parse('{"enqueued_at":1795303590.0}'))).toBe(7);
    expect(ownDialect(JobRecord.parse('{"class":"X"}'))).toBe(8);
  });
});

describe("process hash (ProcessSet#each)", () => {
  const info8 =
    '{"hostname":"vm","started_at":1795303460.5995235,"pid":4449,"tag":"app","capsules":{"default":{"concurrency":3,"mode":"weighted","weights":{"critical":2,"default":1}}},"queues":["critical","default"],"weights":[{"critical":2,"default":1}],"labels":[],"identity":"vm:4449:af7cbdd56384","version":"8.1.7","embedded":false}';
  it("reads an 8.1.7 heartbeat: queues from capsules, concurrency from the hash field", () => {
    const p = processFromHash("vm:4449:af7cbdd56384", [info8, "3", "1", "1795303600.25", "false", "51200", "250"])!;
    expect(p).toMatchObject({
      identity: "vm:4449:af7cbdd56384",
      hostname: "vm",
      pid: 4449,
      tag: "app",
      version: "8.1.7",
      queues: ["critical", "default"],
      concurrency: 3,
      busy: 1,
      beat: 1795303600.25,
      quiet: false,
      rss: 51200,
      rttUs: 250,
      side: "ruby",
      embedded: false,
    });
  });
  it("falls back to info.concurrency when the hash field is missing (writers before 8.1.2)", () => {
    const info =
      '{"hostname":"h","started_at":1.0,"pid":1,"tag":"","concurrency":10,"queues":["default"],"labels":["sidekiq-bridge"],"identity":"h:1:0123456789ab"}';
    const p = processFromHash("h:1:0123456789ab", [info, null, "0", "1795303600.0", "true", null, null])!;
    expect(p).toMatchObject({
      concurrency: 10,
      queues: ["default"],
      quiet: true,
      side: "node",
      version: undefined,
      rss: 0,
    });
  });
  it("skips a member whose info is gone or unreadable", () => {
    expect(processFromHash("x", [null, null, null, null, null, null, null])).toBeUndefined();
    expect(processFromHash("x", ["nope", null, null, null, null, null, null])).toBeUndefined();
  });
  it("reads work entries whose payload is the raw string (6.0.2+) or an object (6.0.0–6.0.1)", () => {
    const payload = '{"class":"HardJob","args":[1.0],"jid":"abc","queue":"default"}';
    const w = parseWork("p", "t1", JSON.stringify({ queue: "default", payload, run_at: 1795303600 }))!;
    expect(w).toMatchObject({
      tid: "t1",
      queue: "default",
      runAt: 1795303600,
      payload,
      jid: "abc",
      displayClass: "HardJob",
    });
    const old = parseWork("p", "t2", `{"queue":"default","payload":${payload},"run_at":1795303601}`)!;
    expect(old.payload).toBe(payload);
  });
});
