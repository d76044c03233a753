// The page's chart of readings (loaded after heatmap.js, before readings.js): one reading of several
// sensors over the heatmap's days, in SVG built with the DOM (no library, no CDN), as wide as the page.
// Each sensor is a series in a colour of its own (`series-0` ... in heatmap.css): each day's mean a dot
// inside its min–max band, the means of days that follow each other joined by a line. Its axes read as
// charts do: the reading's name along the value axis (a name like temp_c carries its unit), values at
// round steps with gridlines, dates along the day axis with gridlines. The value labels are measured as
// drawn and the axis makes room for the longest, so a sign or a billion is never cut off. Reading names
// and sensor names are data: inserted as text (textContent), never markup.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const CHART = { height: 320, top: 14, right: 18, bottom: 50, minWidth: 360, fallbackWidth: 720, title: 18 };
const MAX_SERIES = 8; // the colours heatmap.css defines
const VALUE_TICKS = 6; // about as many value labels

function svg(tag, attributes, text) {
  const made = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes || {})) made.setAttribute(name, String(value));
  if (text !== undefined) made.textContent = String(text);
  return made;
}

// Round steps from low to high: 1, 2 or 5 times a power of ten, about `count` of them, both ends on a
// step; one value alone gets a span around it.
function valueTicks(low, high, count) {
  let [bottom, top] = [low, high];
  if (bottom === top) {
    const pad = Math.max(1, Math.abs(low) * 0.05);
    [bottom, top] = [bottom - pad, top + pad];
  }
  const rough = (top - bottom) / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough * (1 - 1e-9));
  const first = Math.floor(bottom / step + 1e-9);
  const last = Math.ceil(top / step - 1e-9);
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const ticks = [];
  for (let i = first; i <= last; i += 1) ticks.push(i * step);
  return { ticks, decimals, bottom: first * step, top: last * step };
}

// A value label: the step's decimals, thousands grouped ("-1,000,000,000", "-20.5").
function tickText(value, decimals) {
  const rounded = Number(value.toFixed(decimals));
  const options = { minimumFractionDigits: decimals, maximumFractionDigits: decimals };
  return (rounded === 0 ? 0 : rounded).toLocaleString("en-US", options);
}

// The days that get a date label, `room` at most: every day, every 2nd, 3rd, 7th or 14th from the
// first, else the first days of months (every 1, 2, 3, 6 or 12 months).
function dayTicks(days, room) {
  const all = days.map((_, i) => i);
  for (const step of [1, 2, 3, 7, 14]) {
    if (Math.ceil(days.length / step) <= room) return all.filter((i) => i % step === 0);
  }
  for (const months of [1, 2, 3, 6, 12]) {
    const starts = all.filter((i) => days[i].endsWith("-01") && (Number(days[i].slice(5, 7)) - 1) % months === 0);
    if (starts.length <= room) return starts.length ? starts : [0];
  }
  return [0];
}

// The width a label takes as drawn (an estimate where the browser lays nothing out).
function drawnWidth(text) {
  const width = text.getComputedTextLength ? text.getComputedTextLength() : 0;
  return width > 0 ? width : text.textContent.length * 7;
}

// One day of a series: its min–max band, its mean's dot, and a title that says its statistics.
function dayMark(day, series, stats, x, y, width) {
  const partial = series.partial.has(day);
  const group = svg("g", {
    class: `reading-day ${series.colour}${partial ? " partial" : ""}`,
    "data-day": day,
    "data-sensor": series.sensor,
    "data-mean": stats.mean,
    "data-min": stats.min,
    "data-max": stats.max,
    "data-count": stats.count,
  });
  const band = Math.max(1, y(stats.min) - y(stats.max));
  group.append(svg("rect", { class: "band", x: x - width / 2, y: y(stats.max), width, height: band }));
  group.append(svg("circle", { class: "mean", cx: x, cy: y(stats.mean), r: 3 }));
  const said =
    `${day}, sensor ${series.label}: mean ${shownNumber(stats.mean)}, stddev ${shownNumber(stats.stddev)}, ` +
    `min ${stats.min}, max ${stats.max} (${plural(stats.count, "value")})` +
    (partial ? "; partial: only the reports counted since readings were kept" : "");
  group.append(svg("title", {}, said));
  return group;
}

// A day of a series that cannot be read, in its place: marked "!" over the plot's height, titled with
// the API's error and repair.
function unreadableMark(day, series, x, width, top, bottom) {
  const group = svg("g", {
    class: `reading-day malformed ${series.colour}`,
    "data-day": day,
    "data-sensor": series.sensor,
    "data-malformed": "1",
  });
  group.append(svg("rect", { class: "unreadable", x: x - width / 2, y: top, width, height: bottom - top }));
  group.append(svg("text", { x, y: (top + bottom) / 2 + 4, "text-anchor": "middle" }, "!"));
  group.append(svg("title", {}, series.unreadable.get(day).join("; ")));
  return group;
}

// The chart of reading `name` over `days`, drawn into `place` at its width. `series`: one per sensor,
// { sensor, label, colour, byDay: {day: stats}, partial: Set, unreadable: Map(day -> [said]) }.
function readingChart(place, name, days, series) {
  const width = Math.max(CHART.minWidth, Math.floor(place.clientWidth) || CHART.fallbackWidth);
  const height = CHART.height;
  const drawn = svg("svg", {
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    class: "reading-chart",
    role: "img",
    "aria-label":
      `${name} of sensor(s) ${series.map((s) => s.label).join(", ")}: ` +
      "each day's mean inside its min\u2013max band",
  });
  place.replaceChildren(drawn);
  const stats = series.flatMap((s) => Object.values(s.byDay));
  const scale = valueTicks(Math.min(...stats.map((s) => s.min)), Math.max(...stats.map((s) => s.max)), VALUE_TICKS);

  // the value labels first, measured, so that the plot starts where the longest ends
  const labels = svg("g", { class: "value-axis" });
  const valueLabels = scale.ticks.map((value) =>
    svg("text", { class: "tick value", "text-anchor": "end", "data-value": value }, tickText(value, scale.decimals))
  );
  labels.append(...valueLabels);
  drawn.append(labels);
  const left = CHART.title + 10 + Math.max(0, ...valueLabels.map(drawnWidth)) + 6;
  const [right, top, bottom] = [width - CHART.right, CHART.top, height - CHART.bottom];
  const y = (value) => top + ((scale.top - value) / (scale.top - scale.bottom)) * (bottom - top);
  const slot = (right - left) / days.length;
  const x = (i) => left + (i + 0.5) * slot;

  const grid = svg("g", { class: "grid" });
  scale.ticks.forEach((value, i) => {
    grid.append(svg("line", { x1: left, y1: y(value), x2: right, y2: y(value) }));
    valueLabels[i].setAttribute("x", left - 6);
    valueLabels[i].setAttribute("y", y(value) + 4);
  });
  const dayAxis = svg("g", { class: "day-axis" });
  const sample = svg("text", { class: "tick day" }, "2024-05-01");
  dayAxis.append(sample);
  drawn.append(dayAxis);
  const dateWidth = drawnWidth(sample);
  sample.remove();
  for (const i of dayTicks(days, Math.max(1, Math.floor((right - left) / (dateWidth + 14))))) {
    grid.append(svg("line", { x1: x(i), y1: top, x2: x(i), y2: bottom }));
    dayAxis.append(svg("line", { class: "axis", x1: x(i), y1: bottom, x2: x(i), y2: bottom + 4 }));
    const at = Math.min(Math.max(x(i), dateWidth / 2 + 2), width - dateWidth / 2 - 2);
    dayAxis.append(svg("text", { class: "tick day", x: at, y: bottom + 17, "text-anchor": "middle" }, days[i]));
  }
  drawn.insertBefore(grid, labels);
  const middle = (top + bottom) / 2;
  const valueTitle = { class: "axis-title", x: -middle, y: 13, transform: "rotate(-90)", "text-anchor": "middle" };
  drawn.append(svg("text", valueTitle, name));
  const dayTitle = { class: "axis-title", x: (left + right) / 2, y: height - 8, "text-anchor": "middle" };
  drawn.append(svg("text", dayTitle, "day"));
  drawn.append(svg("line", { class: "axis", x1: left, y1: bottom, x2: right, y2: bottom }));
  drawn.append(svg("line", { class: "axis", x1: left, y1: top, x2: left, y2: bottom }));

  // each sensor a little apart within a day's slot, so that bands of one day stay apart
  const apart = Math.min(16, (slot * 0.7) / series.length);
  const band = Math.max(1, Math.min(12, apart * 0.8));
  const marks = svg("g", { class: "series" });
  series.forEach((s, k) => {
    const at = (i) => x(i) + (k - (series.length - 1) / 2) * apart;
    let run = [];
    const runs = [];
    days.forEach((day, i) => {
      if (own(s.byDay, day)) run.push(`${at(i)},${y(own(s.byDay, day).mean)}`);
      else if (run.length) runs.push(run.splice(0));
    });
    if (run.length) runs.push(run);
    for (const points of runs) {
      marks.append(svg("polyline", { class: `mean-line ${s.colour}`, points: points.join(" ") }));
    }
  });
  series.forEach((s, k) => {
    const at = (i) => x(i) + (k - (series.length - 1) / 2) * apart;
    days.forEach((day, i) => {
      if (own(s.byDay, day)) marks.append(dayMark(day, s, own(s.byDay, day), at(i), y, band));
      else if (s.unreadable.has(day)) marks.append(unreadableMark(day, s, at(i), band, top, bottom));
    });
  });
  drawn.insertBefore(marks, labels);
  return drawn;
}
