#!/usr/bin/env node
// hlog-summary.js LOG: reads an HdrHistogram interval log with
// hdr-histogram-js's own HistogramLogReader (not tilebench's code) and prints
// one JSON object: per tag, the total count and HdrHistogram's p50, p99 and
// max (getValueAtPercentile / maxValue: highest equivalent values), and the
// interval's start (s after the log's BaseTime) and length (s). Lines with
// the same tag are added up. Exit 1 with a message when the log is unreadable.
"use strict";
const fs = require("fs");
const hdr = require("hdr-histogram-js");

if (process.argv.length !== 3) {
  process.stderr.write("usage: node hlog-summary.js LOG\n");
  process.exit(2);
}
const text = fs.readFileSync(process.argv[2], "utf8");
// 64-bit buckets (a Float64Array): counts beyond 2^32 stay exact
const reader = new hdr.HistogramLogReader(text, 64);
const byTag = new Map();
let h;
while ((h = reader.nextIntervalHistogram()) !== null) {
  const seen = byTag.get(h.tag);
  if (seen) {
    seen.hist.add(h);
  } else {
    byTag.set(h.tag, {
      hist: h,
      start_s: h.startTimeStampMsec / 1000 - (reader.baseTimeSec || 0),
      length_s: (h.endTimeStampMsec - h.startTimeStampMsec) / 1000,
    });
  }
}
const out = {};
for (const [tag, e] of byTag) {
  out[tag] = {
    count: e.hist.totalCount,
    p50: e.hist.getValueAtPercentile(50),
    p99: e.hist.getValueAtPercentile(99),
    max: e.hist.totalCount ? e.hist.maxValue : 0,
    start_s: Math.round(e.start_s * 1000) / 1000,
    length_s: Math.round(e.length_s * 1000) / 1000,
  };
}
process.stdout.write(JSON.stringify(out, null, 1) + "\n");
