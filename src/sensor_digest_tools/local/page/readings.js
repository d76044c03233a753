// The page's readings (loaded after heatmap.js and chart.js, whose helpers it uses): one reading of one
// or several sensors over the heatmap's range, drawn by chart.js, every answer of GET
// /sensors/{id}/readings, with a legend naming each sensor; and, in a day's hours, the chosen reading's
// mean, min and max per hour (GET /sensors/{id}/readings/hours). Reading names are data (a day item
// written by hand may hold any name): inserted as text (textContent), never markup. A day the API
// cannot read (its `malformed` entries: readings written by hand in a shape ingest never writes) is
// named with the API's error and repair, in the chart's line, its place and its hours' line. A range
// in which the sensors have no readings says where their latest reports are, and offers to go there.
"use strict";

// The reading the page shows (from the URL, the selector, or the first name there is): kept in the URL.
const openReading = { reading: "" };
// What the chart drew last, to draw it again at the page's width when the window changes.
let drawnChart = null;

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

// The ids typed for the chart ("7, 12"): each once, in order; those that are no sensor id apart.
function chartIds(typed) {
  const parts = typed.split(",").map((part) => part.trim()).filter((part) => part !== "");
  const ids = [...new Set(parts.filter((part) => SENSOR_ID.test(part)))];
  return { ids, bad: parts.filter((part) => !SENSOR_ID.test(part)) };
}

// A sensor as the legend names it: its id, and its registered name (heatmap.js's `knownSensors`).
function seriesLabel(sensorId) {
  const profile = knownSensors.get(Number(sensorId));
  return profile && profile.name !== null ? `${sensorId} \u00b7 ${profile.name}` : String(sensorId);
}

// One sensor's reading `name` as the chart draws it, and what the chart's line says of it.
function series(sensorId, k, answer, name) {
  const { days: answered, partial, malformed } = answer;
  const byDay = {};
  for (const [day, byName] of Object.entries(answered)) if (own(byName, name)) byDay[day] = own(byName, name);
  const unreadable = unreadableDays(malformed);
  const shown = Object.keys(byDay).sort();
  const values = shown.reduce((n, day) => n + byDay[day].count, 0);
  const partly = shown.filter((day) => partial.has(day)).length;
  const named = [...unreadable.values()].flat().join("; ");
  const low = Math.min(...shown.map((day) => byDay[day].min));
  const high = Math.max(...shown.map((day) => byDay[day].max));
  const facts =
    (shown.length === 0
      ? `no values of ${name}.`
      : `${shown.length} day(s) with values, ${values} value(s), from ${low} to ${high}.`) +
    (partly ? ` ${partly} day(s) partial (hollow): their statistics hold only some of their reports.` : "") +
    (unreadable.size ? ` ${unreadable.size} day(s) cannot be read, left out of the chart: ${named}.` : "");
  return { sensor: sensorId, label: seriesLabel(sensorId), colour: `series-${k}`, byDay, partial, unreadable, facts };
}

// The 30 days up to `day`, the page's default width of a range, and a button that opens them.
function rangeTo(day) {
  return { from: isoDay(new Date(Date.parse(day + "T00:00:00Z") - 29 * DAY_MS)), to: day };
}

function rangeButton(day) {
  const { from, to } = rangeTo(day);
  const button = element("button", `Show ${from} to ${to}`, "go-to-range");
  button.type = "button";
  button.dataset.from = from;
  button.dataset.to = to;
  button.addEventListener("click", () => {
    byId("from").value = from;
    byId("to").value = to;
    render();
  });
  return button;
}

// Where the chart's sensors reported last, said after `line`'s text with a button that goes there
// (nothing when that day is in the range: its reports carry no readings).
async function sayWhereTheyReported(line, ids, from, to) {
  const latest = await latestReports(ids);
  if (latest === null || (from <= latest && latest <= to)) return;
  line.append(
    document.createTextNode(` ${ids.length === 1 ? "Its" : "Their"} latest reports are on ${latest}: `),
    rangeButton(latest)
  );
}

function legendOf(drawn, name) {
  const legend = byId("readings-legend");
  legend.replaceChildren(
    ...drawn.map((s) => {
      const item = element("li", null, s.colour);
      item.dataset.sensor = s.sensor;
      item.append(element("span", null, "swatch"), element("span", `sensor ${s.label}`, "series-name"));
      if (Object.keys(s.byDay).length === 0) item.append(document.createTextNode(` (no values of ${name})`));
      return item;
    })
  );
}

function redrawChart() {
  if (drawnChart !== null) readingChart(byId("readings-chart"), drawnChart.name, drawnChart.days, drawnChart.series);
}

// One reading of the sensors typed, over the range: the selector, the chart, its legend and a line that
// says what it shows. A failure costs only this part, or only its sensor: the line says why.
async function drawReadings(typed, wanted, from, to) {
  const place = byId("readings-chart");
  const line = byId("readings-title-line");
  place.replaceChildren();
  byId("readings-legend").replaceChildren();
  drawnChart = null;
  fillSelector([], "");
  openReading.reading = wanted;
  const { ids: every, bad } = chartIds(typed);
  if (bad.length) {
    line.textContent = `Not a sensor id: ${bad.join(", ")}`;
    return;
  }
  if (every.length === 0) {
    line.textContent =
      "Type the ids of one or more sensors (7, 12), or click rows of the heatmap, " +
      "to see a reading of theirs over the range.";
    return;
  }
  const ids = every.slice(0, MAX_SERIES);
  const leftOut =
    every.length > ids.length
      ? ` The chart draws ${MAX_SERIES} sensors at most: ${every.slice(MAX_SERIES).join(", ")} left out.`
      : "";
  const outcomes = await settledInTurns(ids, (id) => sensorReadings(id, from, to));
  const failed = ids.filter((_, k) => outcomes[k].error !== undefined);
  const failures = failed
    .map((id) => ` Sensor ${id}: the readings could not be read: ${outcomes[ids.indexOf(id)].error}.`)
    .join("");
  const who = ids.length === 1 ? `Sensor ${ids[0]}` : `Sensors ${ids.join(", ")}`;
  if (failed.length === ids.length) {
    line.textContent =
      ids.length === 1 ? `Sensor ${ids[0]}: the readings could not be read: ${outcomes[0].error}` : failures.trim();
    return;
  }
  const answers = ids.flatMap((id, k) => (outcomes[k].value ? [[id, outcomes[k].value]] : []));
  const names = [
    ...new Set(answers.flatMap(([, a]) => Object.values(a.days).flatMap((byName) => Object.keys(byName)))),
  ].sort();
  const name = fillSelector(names, wanted);
  openReading.reading = name;
  if (names.length === 0) {
    const unreadable = answers.map(([id, a]) => [id, unreadableDays(a.malformed)]).filter(([, u]) => u.size > 0);
    const told = unreadable.map(
      ([id, u]) =>
        `${ids.length === 1 ? "" : `Sensor ${id}: `}` +
        `${u.size} day(s) cannot be read: ${[...u.values()].flat().join("; ")}.`
    );
    line.textContent =
      (unreadable.length === 0
        ? `${who}: no readings from ${from} to ${to}.`
        : `${who}: no readings that can be read from ${from} to ${to}. ${told.join(" ")}`) + failures + leftOut;
    if (unreadable.length === 0) await sayWhereTheyReported(line, ids, from, to);
    return;
  }
  const drawn = answers.map(([id, a]) => series(id, ids.indexOf(id), a, name));
  const head = `${who}, ${name}, ${from} to ${to}`;
  line.textContent =
    (drawn.length === 1 && ids.length === 1
      ? `${head}: ${drawn[0].facts}`
      : `${head}. ${drawn.map((s) => `Sensor ${s.sensor}: ${s.facts}`).join(" ")}`) +
    failures +
    leftOut +
    " Each day: its mean (the dot) inside its min\u2013max band" +
    (ids.length > 1 ? ", a colour a sensor (the legend)" : "") +
    "; click a day to see its hours.";
  const shown = drawn.filter((s) => Object.keys(s.byDay).length > 0 || s.unreadable.size > 0);
  drawnChart = { name, days: daysBetween(from, to), series: shown };
  redrawChart();
  legendOf(drawn, name);
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
    for (const stat of ["mean", "min", "max"]) {
      const row = element("tr", null, "reading-hours");
      row.dataset.reading = name;
      row.dataset.stat = stat;
      row.append(element("th", `${name} ${stat}`));
      for (let h = 0; h < 24; h += 1) {
        const hour = String(h).padStart(2, "0");
        const stats = own(own(answer.hours, hour), name);
        const shown = stats === undefined ? "" : stat === "mean" ? shownNumber(stats.mean) : String(stats[stat]);
        const td = element("td", shown, "hour reading");
        td.dataset.hour = hour;
        if (stats !== undefined) td.title = `${day} ${hourSpan(hour)}: ${name} ${stat} ${shown} (${plural(stats.count, "value")})`;
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

// The chart is as wide as the page: drawn again, a moment after the window changes.
let resized = null;
window.addEventListener("resize", () => {
  clearTimeout(resized);
  resized = setTimeout(redrawChart, 150);
});
