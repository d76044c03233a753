// The page's readings (loaded after heatmap.js, whose helpers it uses): a sensor's chosen reading over
// the heatmap's range, each day's mean drawn as a line of dots inside its min–max band (SVG, drawn with
// the DOM: no library, no CDN), every answer of GET /sensors/{id}/readings; and, in a day's hours, the
// chosen reading's mean, min and max per hour (GET /sensors/{id}/readings/hours). Reading names are
// data (a day item written by hand may hold any name): inserted as text (textContent), never markup.
// A day the API cannot read (its `malformed` entries: readings written by hand in a shape ingest never
// writes) is named with the API's error and repair, in the chart's line, its slot and its hours' line.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const CHART = { width: 720, height: 240, left: 64, right: 12, top: 12, bottom: 30 };

// The reading the page shows (from the URL, the selector, or the first name there is): kept in the URL.
const openReading = { rsensor: "", reading: "" };

// A member of an answer's object, only if the answer holds it: a reading's name is the producer's
// ("constructor" is a valid one), never a property every JavaScript object inherits.
function own(object, key) {
  return object !== undefined && Object.hasOwn(object, key) ? object[key] : undefined;
}

function svg(tag, attributes, text) {
  const made = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes || {})) made.setAttribute(name, String(value));
  if (text !== undefined) made.textContent = String(text);
  return made;
}

// How many decimals a number as JSON wrote it has (21.25: 2); exponents of JSON's own numbers too.
function decimalsOf(value) {
  const [digits, exponent] = String(value).toLowerCase().split("e");
  const fraction = (digits.split(".")[1] || "").length;
  return Math.max(0, fraction - Number(exponent || 0));
}

// A mean shown to two decimals more than the values have (at most 8).
function meanText(mean, values) {
  const decimals = Math.max(...values.map(decimalsOf));
  return mean.toFixed(Math.min(decimals + 2, 8));
}

async function sensorReadings(sensorId, from, to) {
  const days = {};
  const partial = new Set();
  const malformed = [];
  await allPages(`/sensors/${encodeURIComponent(sensorId)}/readings`, { from, to }, (page) => {
    Object.assign(days, page.days);
    for (const day of page.partial_days || []) partial.add(day);
    malformed.push(...(page.malformed || []));
  });
  return { days, partial, malformed };
}

// The days the API could not read, in order, each with what it said of them (as heatmap.js's cells).
function unreadableDays(malformed) {
  const unreadable = new Map();
  for (const bad of [...malformed].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0))) {
    unreadable.set(bad.day, [...(unreadable.get(bad.day) || []), unreadableText(bad.day, bad)]);
  }
  return unreadable;
}

// A day that cannot be read, in its slot of the chart: marked "!" over the plot's height, titled
// with the API's error and repair.
function unreadableMark(day, said, x, width) {
  const group = svg("g", { class: "reading-day malformed", "data-day": day, "data-malformed": "1" });
  const height = CHART.height - CHART.bottom - CHART.top;
  group.append(svg("rect", { class: "unreadable", x: x - width / 2, y: CHART.top, width, height }));
  group.append(svg("text", { x, y: CHART.top + height / 2 + 4, "text-anchor": "middle" }, "!"));
  group.append(svg("title", {}, said.join("; ")));
  return group;
}

// The reading selector: every name the range holds, the chosen one selected (else the first).
function fillSelector(names, wanted) {
  const select = byId("reading-name");
  select.replaceChildren(
    ...names.map((name) => {
      const option = element("option", name);
      option.value = name;
      return option;
    })
  );
  const chosen = names.includes(wanted) ? wanted : names[0] || "";
  select.value = chosen;
  select.disabled = names.length === 0;
  return chosen;
}

function scale(low, high) {
  const pad = low === high ? Math.max(1, Math.abs(low) * 0.05) : 0;
  const [bottom, top] = [low - pad, high + pad];
  const plot = CHART.height - CHART.top - CHART.bottom;
  return (value) => CHART.top + ((top - value) / (top - bottom)) * plot;
}

// One day of the chart: its min–max band, its mean's dot, and a title that says them.
function dayMark(day, stats, x, y, width, partial) {
  const group = svg("g", {
    class: partial ? "reading-day partial" : "reading-day",
    "data-day": day,
    "data-mean": stats.mean,
    "data-min": stats.min,
    "data-max": stats.max,
    "data-count": stats.count,
  });
  const band = Math.max(1, y(stats.min) - y(stats.max));
  group.append(svg("rect", { class: "band", x: x - width / 2, y: y(stats.max), width, height: band }));
  group.append(svg("circle", { class: "mean", cx: x, cy: y(stats.mean), r: 3 }));
  const said =
    `${day}: mean ${meanText(stats.mean, [stats.min, stats.max])}, min ${stats.min}, max ${stats.max} ` +
    `(${stats.count} value(s))${partial ? "; partial: only the reports counted since readings were kept" : ""}`;
  group.append(svg("title", {}, said));
  return group;
}

// The chart of one reading over `days`: a slot per day, the means joined where days follow each other,
// a day that cannot be read marked in its slot.
function chart(name, days, byDay, partial, unreadable) {
  const shown = days.filter((day) => byDay[day]);
  const low = Math.min(...shown.map((day) => byDay[day].min));
  const high = Math.max(...shown.map((day) => byDay[day].max));
  const y = scale(low, high);
  const plot = CHART.width - CHART.left - CHART.right;
  const slot = plot / days.length;
  const x = (i) => CHART.left + (i + 0.5) * slot;
  const drawn = svg("svg", {
    viewBox: `0 0 ${CHART.width} ${CHART.height}`,
    class: "reading-chart",
    role: "img",
    "aria-label": `${name}: each day's mean inside its min\u2013max band`,
  });
  const base = CHART.height - CHART.bottom;
  drawn.append(svg("line", { class: "axis", x1: CHART.left, y1: base, x2: CHART.width - CHART.right, y2: base }));
  drawn.append(svg("line", { class: "axis", x1: CHART.left, y1: CHART.top, x2: CHART.left, y2: base }));
  for (const value of low === high ? [low] : [low, high]) {
    drawn.append(svg("text", { class: "tick", x: CHART.left - 6, y: y(value) + 4, "text-anchor": "end" }, value));
  }
  const ends = days.length === 1 ? [0] : [0, days.length - 1];
  for (const i of ends) {
    const anchor = days.length === 1 ? "middle" : i === 0 ? "start" : "end";
    const at = days.length === 1 ? x(i) : i === 0 ? CHART.left : CHART.width - CHART.right;
    drawn.append(svg("text", { class: "tick", x: at, y: CHART.height - 8, "text-anchor": anchor }, days[i]));
  }
  let run = [];
  const runs = [];
  days.forEach((day, i) => {
    if (byDay[day]) run.push(`${x(i)},${y(byDay[day].mean)}`);
    else if (run.length) runs.push(run.splice(0));
  });
  if (run.length) runs.push(run);
  for (const points of runs) drawn.append(svg("polyline", { class: "mean-line", points: points.join(" ") }));
  const width = Math.max(1, Math.min(14, slot * 0.6));
  days.forEach((day, i) => {
    if (byDay[day]) drawn.append(dayMark(day, byDay[day], x(i), y, width, partial.has(day)));
    else if (unreadable.has(day)) drawn.append(unreadableMark(day, unreadable.get(day), x(i), width));
  });
  return drawn;
}

// A sensor's chosen reading over the range: the selector, the chart and a line that says what it shows.
// A failure costs only this part: its line says why.
async function drawReadings(sensorId, wanted, from, to) {
  const place = byId("readings-chart");
  const line = byId("readings-title-line");
  place.replaceChildren();
  fillSelector([], "");
  openReading.reading = wanted;
  if (sensorId === "") {
    line.textContent = "Pick a sensor (or click a row of the heatmap) to see its readings over the range.";
    return;
  }
  if (!SENSOR_ID.test(sensorId)) {
    line.textContent = `Not a sensor id: ${sensorId}`;
    return;
  }
  try {
    const { days: answered, partial, malformed } = await sensorReadings(sensorId, from, to);
    const names = [...new Set(Object.values(answered).flatMap((byName) => Object.keys(byName)))].sort();
    const name = fillSelector(names, wanted);
    openReading.reading = name;
    const unreadable = unreadableDays(malformed);
    const named = [...unreadable.values()].flat().join("; ");
    if (names.length === 0) {
      line.textContent =
        unreadable.size === 0
          ? `Sensor ${sensorId}: no readings from ${from} to ${to}.`
          : `Sensor ${sensorId}: no readings that can be read from ${from} to ${to}. ` +
            `${unreadable.size} day(s) cannot be read: ${named}.`;
      return;
    }
    const byDay = {};
    for (const [day, byName] of Object.entries(answered)) if (own(byName, name)) byDay[day] = own(byName, name);
    const shown = Object.keys(byDay).sort();
    const values = shown.reduce((n, day) => n + byDay[day].count, 0);
    const low = Math.min(...shown.map((day) => byDay[day].min));
    const high = Math.max(...shown.map((day) => byDay[day].max));
    const partly = shown.filter((day) => partial.has(day)).length;
    line.textContent =
      `Sensor ${sensorId}, ${name}, ${from} to ${to}: ${shown.length} day(s) with values, ${values} value(s), ` +
      `from ${low} to ${high}.` +
      (partly ? ` ${partly} day(s) partial (hollow): their statistics hold only some of their reports.` : "") +
      (unreadable.size ? ` ${unreadable.size} day(s) cannot be read, left out of the chart: ${named}.` : "") +
      " Each day: its mean (the dot) inside its min\u2013max band; click a day to see its hours.";
    place.append(chart(name, daysBetween(from, to), byDay, partial, unreadable));
  } catch (problem) {
    line.textContent = `Sensor ${sensorId}: the readings could not be read: ${problem.message}`;
  }
}

// The chosen reading's mean, min and max in each hour of a day, as rows under the hours' counts (a
// reading the day does not hold: the day's first reading instead); readings the API cannot read are
// said with its error and repair. A failure costs only these rows.
async function appendReadingHours(body, sensorId, day) {
  const line = byId("hours-readings-line");
  line.textContent = "";
  try {
    const answer = await api(`/sensors/${encodeURIComponent(sensorId)}/readings/hours`, { day });
    const names = [...new Set(Object.values(answer.hours).flatMap((byName) => Object.keys(byName)))].sort();
    const malformed = answer.malformed || [];
    const cannot = malformed.length
      ? `The readings of ${day} cannot be read: ` +
        `${malformed.map((bad) => `${bad.error}. To mend it: ${bad.repair}`).join("; ")}.`
      : "";
    line.textContent = cannot;
    if (names.length === 0) return;
    const name = names.includes(openReading.reading) ? openReading.reading : names[0];
    const held = Object.values(answer.hours).flatMap((byName) => (own(byName, name) ? [own(byName, name)] : []));
    const values = held.flatMap((stats) => [stats.min, stats.max]);
    for (const stat of ["mean", "min", "max"]) {
      const row = element("tr", null, "reading-hours");
      row.dataset.reading = name;
      row.dataset.stat = stat;
      row.append(element("th", `${name} ${stat}`));
      for (let h = 0; h < 24; h += 1) {
        const hour = String(h).padStart(2, "0");
        const stats = own(own(answer.hours, hour), name);
        const shown = stats === undefined ? "" : stat === "mean" ? meanText(stats.mean, values) : String(stats[stat]);
        const td = element("td", shown, "hour reading");
        td.dataset.hour = hour;
        if (stats !== undefined) td.title = `${day} ${hourSpan(hour)}: ${name} ${stat} ${shown} (${stats.count} value(s))`;
        row.append(td);
      }
      body.append(row);
    }
    line.textContent =
      (cannot ? `${cannot} ` : "") +
      `${name} in each hour: mean, min and max of its values` +
      (names.length > 1 ? ` (the day also holds ${names.filter((n) => n !== name).join(", ")}: pick one above)` : "") +
      (answer.complete ? "." : "; partial: the hours hold only the reports counted since readings were kept.");
  } catch (problem) {
    line.textContent = `The readings of the hours could not be read: ${problem.message}`;
  }
}
