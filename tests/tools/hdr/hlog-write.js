#!/usr/bin/env node
// hlog-write.js SPEC.json: writes an HdrHistogram interval log to stdout with
// hdr-histogram-js's own HistogramLogWriter (not tilebench's code), from the
// values SPEC gives:
//   {"start_time_ms": 1700000000000,
//    "histograms": [{"tag": "a", "start_s": 0, "length_s": 3,
//                    "values": [[VALUE, COUNT], ...]}, ...]}
// Each histogram has tilebench's layout: lowest 1, highest 100000000, 3
// significant digits. Interval_Max is written with the writer's default
// max value unit ratio (1000).
"use strict";
const fs = require("fs");
const hdr = require("hdr-histogram-js");

if (process.argv.length !== 3) {
  process.stderr.write("usage: node hlog-write.js SPEC.json\n");
  process.exit(2);
}
const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
let out = "";
const writer = new hdr.HistogramLogWriter((s) => {
  out += s;
});
writer.outputComment("[written by tilebench tests/tools/hdr/hlog-write.js with hdr-histogram-js]");
writer.outputLogFormatVersion();
writer.outputStartTime(spec.start_time_ms);
writer.outputLegend();
for (const d of spec.histograms) {
  const h = hdr.build({
    bitBucketSize: 64,
    lowestDiscernibleValue: 1,
    highestTrackableValue: 100000000,
    numberOfSignificantValueDigits: 3,
  });
  for (const [value, count] of d.values) h.recordValueWithCount(value, count);
  h.tag = d.tag;
  writer.outputIntervalHistogram(h, d.start_s, d.start_s + d.length_s);
}
process.stdout.write(out);
