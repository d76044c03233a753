// The page of `sensor-digest up`: a heatmap of day counts (sensors by days) and a sensor's months,
// every figure an answer of the read API on the same origin. Sensor names and ids come from
// producers and operators: they are inserted as text (textContent), never as markup.
//
// Its limits: a range of at most 366 days (the API's), and at most MAX_CELLS cells (sensors x days:
// 400 sensors over a year, 5,000 over 30 days); past that, the first sensors that fit are drawn and
// the page says how many it left out. Rows are fetched a few at a time; a row whose request fails is
// drawn with the API's reason and the others stand; a day or month the API could not read (its
// `malformed` entries) is marked in its cell with the repair the API names. A click on a day's cell
// opens its 24 hours (GET /sensors/{id}/hours), each hour's count written in its cell, in the zone
// the API names (the sensor's registered zone, else the digest zone); the sensors GET /silence lists
// are marked in the heatmap, said in the one phrasing the command line and the docs use (silenceText,
// as sensor_digest.silence.rules.wording), and the page says how many are silent. A sensor's readings
// over the range, and a day's readings by hour, are readings.js's (loaded after this file, with
// chart.js). A range the page opens on by default (the last 30 days) that holds no report of its
// sensors is moved to where their latest reports are (latestReports), and said so; a range chosen
// (in the address, or the form) stays, and the page says where the reports are, with a button to go.
"use strict";

const DAY_MS = 86400000;
const MAX_DAYS = 366;
const MAX_CELLS = 150000;
const FETCHES_AT_ONCE = 6;
const SENSOR_ID = /^[0-9]{1,16}$/;
const SEARCH_WINDOWS = 10; // latestReports: 10 requests of 24 months, the 20 years before next month

// The registered sensors by id, as the heatmap read them last (their names, for the chart's legend).
const knownSensors = new Map();

// A member of an answer's object, only if the answer holds it: a reading's name is the producer's
// ("constructor" is a valid one), never a property every JavaScript object inherits.
function own(object, key) {
  return object !== undefined && Object.hasOwn(object, key) ? object[key] : undefined;
}

function byId(id) {
  return document.getElementById(id);
}

function element(tag, text, className) {
  const made = document.createElement(tag);
  if (text !== undefined && text !== null) made.textContent = String(text);
  if (className) made.className = className;
  return made;
}

function isoDay(date) {
  return date.toISOString().slice(0, 10);
}

function daysBetween(from, to) {
  const days = [];
  const last = Date.parse(to + "T00:00:00Z");
  for (let t = Date.parse(from + "T00:00:00Z"); t <= last && days.length <= MAX_DAYS; t += DAY_MS) {
    days.push(isoDay(new Date(t)));
  }
  return days;
}

function monthDays(month) {
  const [year, number] = month.split("-").map(Number);
  const count = new Date(Date.UTC(year, number, 0)).getUTCDate();
  return Array.from({ length: count }, (_, i) => `${month}-${String(i + 1).padStart(2, "0")}`);
}

// A mean or standard deviation as a person reads it, by the command line's rule too (cli/readings.py's
// `shown`): the digits the API wrote (String gives a number's shortest form, as Python's repr does),
// rounded to 15 significant digits on those digits (never through toFixed, which rounds the binary
// value), a tie (a 5 and nothing after it) away from zero, in plain digits without trailing zeros.
const SIGNIFICANT = 15;
function shownNumber(value) {
  const [mantissa, exponent] = String(value).toLowerCase().split("e");
  const negative = mantissa.startsWith("-");
  const [whole, fraction = ""] = mantissa.replace("-", "").split(".");
  let digits = whole + fraction;
  let point = whole.length + Number(exponent || 0); // digits before the decimal point
  const lead = digits.length - digits.replace(/^0+/, "").length;
  digits = digits.slice(lead);
  point -= lead;
  if (digits === "") return "0";
  if (digits.length > SIGNIFICANT) {
    const up = digits[SIGNIFICANT] >= "5";
    digits = digits.slice(0, SIGNIFICANT);
    if (up) {
      let i = digits.length - 1;
      while (i >= 0 && digits[i] === "9") i -= 1;
      if (i < 0) {
        digits = "1" + "0".repeat(SIGNIFICANT - 1);
        point += 1;
      } else {
        digits = digits.slice(0, i) + String(Number(digits[i]) + 1) + "0".repeat(digits.length - i - 1);
      }
    }
  }
  digits = digits.replace(/0+$/, "");
  const sign = negative ? "-" : "";
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return sign + digits + "0".repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

// "1 report", "2 reports": a count and its noun.
function plural(count, noun) {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

// The largest of many numbers: a loop (spreading them as arguments throws RangeError past ~100,000).
function largest(values, floor) {
  let most = floor;
  for (const value of values) if (value > most) most = value;
  return most;
}

// One GET of the API: its JSON, or an Error carrying the API's own {"error": ...}.
async function api(path, params) {
  const query = new URLSearchParams(params || {}).toString();
  const response = await fetch(query ? `${path}?${query}` : path, { headers: { Accept: "application/json" } });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.error || `${response.status} ${response.statusText}`);
  return body;
}

// Every page of a paginated answer, following next_token.
async function allPages(path, params, merge) {
  let token = null;
  do {
    const page = await api(path, token ? { ...params, token } : params);
    merge(page);
    token = page.next_token || null;
  } while (token);
}

// `work` over `items`, a few at a time; each outcome settled on its own ({value} or {error}).
async function settledInTurns(items, work) {
  const outcomes = new Array(items.length);
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const i = next;
      next += 1;
      try {
        outcomes[i] = { value: await work(items[i]) };
      } catch (problem) {
        outcomes[i] = { error: problem.message };
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(FETCHES_AT_ONCE, items.length) }, worker));
  return outcomes;
}

async function registeredSensors() {
  const sensors = [];
  const leftOut = [];
  await allPages("/sensors", {}, (page) => {
    sensors.push(...page.sensors);
    leftOut.push(...(page.malformed || []));
  });
  return { sensors, leftOut };
}

// The silent registered sensors (GET /silence, every page), by id; a failure only loses the marks.
async function silentSensors() {
  const silent = new Map();
  try {
    await allPages("/silence", {}, (page) => {
      for (const entry of page.sensors) silent.set(entry.sensor_id, entry);
    });
    return { silent, error: null };
  } catch (problem) {
    return { silent, error: problem.message };
  }
}

// An hour "HH" as the span it stands for: "19:00–20:00" (the silence counts from its end).
function hourSpan(hour) {
  return `${hour}:00\u2013${String(Number(hour) + 1).padStart(2, "0")}:00`;
}

// A GET /silence entry in the one phrasing of the command line and the docs (silence/rules.py's wording).
function silenceText(entry) {
  const threshold = `threshold ${entry.threshold_hours} h`;
  if (entry.last_report_hour !== null) {
    const [day, hour] = entry.last_report_hour.split("T");
    return (
      `last report in hour ${day} ${hourSpan(hour)} ${entry.timezone}, ` +
      `silent ${entry.silent_hours} h, ${threshold}`
    );
  }
  if (entry.registered_at === null || entry.silent_hours === null) {
    return `never reported, registered before registration times were kept, ${threshold}`;
  }
  const when = `${entry.registered_at.slice(0, 10)} ${entry.registered_at.slice(11, 16)} UTC`;
  return `never reported, registered ${when}, silent ${entry.silent_hours} h, ${threshold}`;
}

async function dayHours(sensorId, day) {
  return api(`/sensors/${encodeURIComponent(sensorId)}/hours`, { day });
}

// A day's 24 hours of one sensor: one cell per hour 00-23, its count written in it, darker for more
// reports; the hours are the sensor's own day's, in the zone the API names.
async function drawHours(sensorId, day) {
  const table = byId("hours");
  table.replaceChildren();
  const title = byId("hours-title-line");
  title.textContent = `Sensor ${sensorId}, ${day}: loading its hours…`;
  try {
    const { hours, timezone, count, complete, malformed } = await dayHours(sensorId, day);
    const counts = Array.from({ length: 24 }, (_, h) => hours[String(h).padStart(2, "0")] || 0);
    const most = largest(counts, 1);
    const head = element("tr");
    head.append(element("th", timezone, "zone"));
    const row = element("tr");
    row.dataset.sensor = String(sensorId);
    row.dataset.day = day;
    row.append(element("th", day));
    counts.forEach((count, h) => {
      const hour = String(h).padStart(2, "0");
      head.append(element("th", hour));
      const td = cell(day, count, most);
      td.classList.add("hour");
      td.textContent = String(count);
      td.dataset.hour = hour;
      td.title = `${day} ${hourSpan(hour)} ${timezone}: ${count}`;
      td.setAttribute("aria-label", td.title);
      row.append(td);
    });
    const thead = element("thead");
    thead.append(head);
    const body = element("tbody");
    body.append(row);
    table.replaceChildren(thead, body);
    await appendReadingHours(body, sensorId, day);
    const reported = Object.keys(hours).sort();
    const where = `Sensor ${sensorId}, ${day}, hours of its day in ${timezone}`;
    const held = counts.reduce((a, b) => a + b, 0);
    title.textContent =
      reported.length === 0
        ? `${where}: no hours (no report that day, or counted before hours were kept).`
        : `${where}: ${held} report(s), last in hour ${hourSpan(reported[reported.length - 1])}.`;
    if (malformed && malformed.length > 0) {
      title.textContent = `${where}: the hours cannot be read: ${malformed[0].error}. To mend it: ${malformed[0].repair}`;
    } else if (complete === false) {
      // the API's own verdict: the hours hold only some of the day's reports (or more, by hand)
      const why = held < count ? "some were counted before hours were kept" : "more than the day's count";
      title.textContent += ` The hours hold ${held} of the day's ${count} report(s): ${why}.`;
    }
  } catch (problem) {
    title.textContent = `Sensor ${sensorId}, ${day}: the hours could not be read: ${problem.message}`;
  }
}

async function dayCounts(sensorId, from, to) {
  const days = {};
  const malformed = {};
  await allPages(`/sensors/${encodeURIComponent(sensorId)}/days`, { from, to }, (page) => {
    Object.assign(days, page.days);
    for (const bad of page.malformed || []) malformed[bad.day] = bad;
  });
  return { days, malformed };
}

async function monthCounts(sensorId, from, to) {
  const months = {};
  const malformed = [];
  await allPages(`/sensors/${encodeURIComponent(sensorId)}/months`, { from, to }, (page) => {
    Object.assign(months, page.months);
    malformed.push(...(page.malformed || []));
  });
  return { months, malformed };
}

function level(count, most) {
  if (!count) return 0;
  return Math.max(1, Math.ceil((4 * count) / most));
}

function cell(day, count, most) {
  const td = element("td", null, `cell level-${level(count, most)}`);
  td.dataset.day = day;
  td.dataset.count = String(count);
  td.title = `${day}: ${count}`;
  td.setAttribute("aria-label", td.title);
  return td;
}

// A `malformed` entry of the API as the page says it: the day (or month), what is wrong, its repair.
function unreadableText(day, bad) {
  return `${day}: cannot be read: ${bad.error}. To mend it: ${bad.repair}`;
}

function malformedCell(day, bad) {
  const td = element("td", "!", "cell malformed");
  td.dataset.day = day;
  td.dataset.malformed = "1";
  td.title = unreadableText(day, bad);
  return td;
}

function extraIds(text) {
  return text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => {
      if (!SENSOR_ID.test(part)) throw new Error(`not a sensor id: ${part}`);
      return Number(part);
    });
}

function headRow(days) {
  const row = element("tr");
  row.append(element("th", "sensor"));
  days.forEach((day, i) => {
    const th = element("th", i === 0 || day.endsWith("-01") ? day.slice(5) : day.slice(8));
    th.title = day;
    row.append(th);
  });
  row.append(element("th", "total"));
  return row;
}

function sensorLabel(sensor) {
  const label = element("th", sensor.name === null ? `${sensor.sensor_id}` : `${sensor.sensor_id} · ${sensor.name}`);
  label.className = "sensor-name";
  if (sensor.timezone) label.title = sensor.timezone;
  return label;
}

function sensorRow(sensor, outcome, days, most, silence) {
  const row = element("tr");
  row.dataset.sensor = String(sensor.sensor_id);
  const label = sensorLabel(sensor);
  if (silence) {
    row.dataset.silent = "1";
    row.classList.add("silent");
    label.append(element("span", ` · ${silenceText(silence)}`, "silence"));
  }
  row.append(label);
  if (outcome.error !== undefined) {
    row.dataset.failed = "1";
    const reason = element("td", `could not be read: ${outcome.error}`, "failed");
    reason.colSpan = days.length + 1;
    row.append(reason);
    return row;
  }
  const { days: counts, malformed } = outcome.value;
  let total = 0;
  for (const day of days) {
    if (malformed[day]) {
      row.dataset.malformed = "1";
      row.append(malformedCell(day, malformed[day]));
      continue;
    }
    const count = counts[day] || 0;
    total += count;
    row.append(cell(day, count, most));
  }
  row.append(element("td", total, "total"));
  return row;
}

// What the heatmap has to say besides its rows: why it is empty, what it left out (each a text, or a
// paragraph already made).
function tell(lines) {
  const notes = byId("notes");
  notes.replaceChildren(...lines.map((line) => (typeof line === "string" ? element("p", line) : line)));
}

// The latest day with reports of any of `ids`, from their month summaries (GET /sensors/{id}/months,
// 24 months a request, the most the API answers), going back from next month for at most 20 years;
// null when none is found (the summaries trail the day items by a moment). A sensor whose months
// cannot be read is passed over.
async function latestReports(ids) {
  const now = new Date();
  let end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  for (let window = 0; window < SEARCH_WINDOWS; window += 1) {
    const start = new Date(Date.UTC(end.getUTCFullYear(), end.getUTCMonth() - 23, 1));
    const [first, last] = [isoDay(start).slice(0, 7), isoDay(end).slice(0, 7)];
    const outcomes = await settledInTurns(ids, (id) => monthCounts(id, first, last));
    let latest = null;
    for (const outcome of outcomes) {
      for (const days of Object.values(outcome.value ? outcome.value.months : {})) {
        for (const [day, count] of Object.entries(days)) {
          if (count > 0 && (latest === null || day > latest)) latest = day;
        }
      }
    }
    if (latest !== null) return latest;
    end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() - 1, 1));
  }
  return null;
}

async function drawHeatmap(from, to, extra) {
  const [{ sensors: registered, leftOut }, silence] = await Promise.all([registeredSensors(), silentSensors()]);
  knownSensors.clear();
  for (const sensor of registered) knownSensors.set(sensor.sensor_id, sensor);
  const rows = new Map(registered.map((s) => [s.sensor_id, s]));
  for (const id of extra) if (!rows.has(id)) rows.set(id, { sensor_id: id, name: null, timezone: null });
  const every = [...rows.values()].sort((a, b) => a.sensor_id - b.sensor_id);
  const days = daysBetween(from, to);
  const fits = Math.max(1, Math.floor(MAX_CELLS / Math.max(1, days.length)));
  const sensors = every.slice(0, fits);
  const outcomes = await settledInTurns(sensors, (s) => dayCounts(s.sensor_id, from, to));
  const counted = outcomes.filter((o) => o.value !== undefined);
  if (outcomes.length > 0 && counted.length === 0) throw new Error(outcomes[0].error); // the request's fault: a bad range
  const most = largest(
    counted.flatMap((o) => Object.values(o.value.days)),
    1
  );

  const table = byId("heatmap");
  const head = element("thead");
  head.append(headRow(days));
  const body = element("tbody");
  const built = document.createDocumentFragment();
  sensors.forEach((sensor, i) =>
    built.append(sensorRow(sensor, outcomes[i], days, most, silence.silent.get(sensor.sensor_id)))
  );
  body.append(built);
  table.replaceChildren(head, body);

  const legend = byId("legend");
  legend.replaceChildren(element("span", null, "level-0"), document.createTextNode(" none, then up to "));
  for (let l = 1; l <= 4; l += 1) legend.append(element("span", null, `level-${l}`));
  legend.append(document.createTextNode(` ${plural(most, "report")} a day`));

  const lines = [];
  const empty = counted.length > 0 && counted.every((o) => Object.keys(o.value.days).length === 0);
  if (every.length === 0) {
    lines.push(
      "No sensors to show: none is registered (sensor-digest sensors register --sensor N --name ... --serial ...) " +
        'and no ids were given. Type the ids of the sensors that reported under "More sensors" (for example 7), ' +
        "or open this page as /?sensors=7&from=2024-05-01&to=2024-05-31."
    );
  }
  if (sensors.length < every.length) {
    lines.push(
      `Showing the first ${sensors.length} of ${every.length} sensors: the page draws at most ` +
        `${MAX_CELLS.toLocaleString("en")} cells (sensors x days). Narrow the range, or name the sensors.`
    );
  }
  const failed = outcomes.filter((o) => o.error !== undefined).length;
  if (failed) lines.push(`${failed} sensor(s) could not be read: their rows say why.`);
  for (const bad of leftOut) lines.push(`A profile left out of the list (${bad.error}): ${bad.repair}.`);
  if (silence.error !== null) lines.push(`The silent sensors could not be read: ${silence.error}`);
  else if (silence.silent.size > 0) {
    lines.push(
      `${silence.silent.size} registered sensor(s) silent past their threshold, marked in red: ` +
        [...silence.silent.values()].map((e) => `${e.sensor_id} (${silenceText(e)})`).join("; ") +
        ". Click a day of one to see its hours."
    );
  }
  return { shown: sensors.length, failed, empty, ids: sensors.map((s) => String(s.sensor_id)), lines };
}

// What the page says of a heatmap without reports in its range, and the range it draws instead: on a
// range it opened on by default, the 30 days to the sensors' latest reports; on a range chosen, the
// same range, with where the reports are and a button that goes there.
async function whereTheReportsAre(values, drawn) {
  const ids = [...new Set([...drawn.ids, ...chartIds(values.rsensor).ids])];
  const latest = ids.length ? await latestReports(ids) : null;
  const none = `No reports from ${values.from} to ${values.to} for these sensors`;
  if (latest === null) {
    const month = isoDay(new Date()).slice(0, 7);
    return {
      said: `${none}, and their month summaries name none in the 20 years to ${month}: pick the range their reports fall in.`,
    };
  }
  if (!rangeChosen) {
    const range = rangeTo(latest);
    return {
      said:
        `No reports in the last 30 days (${values.from} to ${values.to}) for these sensors. ` +
        `Their latest reports are on ${latest}: the page opened on the 30 days to it, ${range.from} to ${range.to}.`,
      range,
    };
  }
  const said = element("p", `${none}. Their latest reports are on ${latest}: `);
  said.append(rangeButton(latest));
  return { said };
}

async function drawMonths(sensorId, from, to) {
  const table = byId("months");
  table.replaceChildren();
  if (sensorId === "") {
    byId("months-title-line").textContent = "Pick a sensor to see its months.";
    return;
  }
  if (!SENSOR_ID.test(sensorId)) throw new Error(`not a sensor id: ${sensorId}`);
  const { months, malformed } = await monthCounts(sensorId, from, to);
  const bad = new Map(malformed.map((m) => [m.day || m.month, m]));
  const names = [...new Set([...Object.keys(months), ...malformed.map((m) => m.month)])].sort();
  byId("months-title-line").textContent = `Sensor ${sensorId}: ${names.length} month(s) with reports, from its summary items.`;
  const most = largest(
    names.flatMap((m) => Object.values(months[m] || {})),
    1
  );
  const head = element("tr");
  head.append(element("th", "month"));
  for (let d = 1; d <= 31; d += 1) head.append(element("th", String(d).padStart(2, "0")));
  head.append(element("th", "total"));
  const thead = element("thead");
  thead.append(head);
  const body = element("tbody");
  for (const month of names) {
    const row = element("tr");
    row.dataset.month = month;
    row.append(element("th", month));
    let total = 0;
    const days = monthDays(month);
    for (const day of days) {
      const unreadable = bad.get(day) || (months[month] === undefined ? bad.get(month) : undefined);
      if (unreadable) {
        row.dataset.malformed = "1";
        row.append(malformedCell(day, unreadable));
        continue;
      }
      const count = (months[month] || {})[day] || 0;
      total += count;
      row.append(cell(day, count, most));
    }
    for (let d = days.length; d < 31; d += 1) row.append(element("td", null, "cell none")); // the total's column stays
    row.append(element("td", total, "total"));
    body.append(row);
  }
  table.append(thead, body);
}

function defaults(params) {
  const today = new Date();
  const to = params.get("to") || isoDay(today);
  const from = params.get("from") || isoDay(new Date(Date.parse(to + "T00:00:00Z") - 29 * DAY_MS));
  const mto = params.get("mto") || to.slice(0, 7);
  const start = new Date(Date.parse(mto + "-01T00:00:00Z"));
  start.setUTCMonth(start.getUTCMonth() - 5);
  const mfrom = params.get("mfrom") || isoDay(start).slice(0, 7);
  const hours = { hsensor: params.get("hsensor") || "", hday: params.get("hday") || "" };
  const readings = { rsensor: params.get("rsensor") || "", reading: params.get("reading") || "" };
  const sensors = params.get("sensors") || "";
  rangeChosen = params.has("from") || params.has("to");
  monthsChosen = params.has("mfrom") || params.has("mto");
  return { from, to, sensors, sensor: params.get("sensor") || "", mfrom, mto, ...hours, ...readings };
}

// The day whose hours are open (from the URL, or the cell clicked last): kept in the URL with the rest.
const openHours = { hsensor: "", hday: "" };
// Whether the range (the months) came from the address or the form, rather than the page's default:
// only a default range is moved to where the reports are.
let rangeChosen = false;
let monthsChosen = false;

function fill(values) {
  openHours.hsensor = values.hsensor;
  openHours.hday = values.hday;
  byId("from").value = values.from;
  byId("to").value = values.to;
  byId("sensors").value = values.sensors;
  byId("month-sensor").value = values.sensor;
  byId("month-from").value = values.mfrom;
  byId("month-to").value = values.mto;
  byId("reading-sensor").value = values.rsensor;
  openReading.reading = values.reading;
}

function read() {
  return {
    from: byId("from").value,
    to: byId("to").value,
    sensors: byId("sensors").value,
    sensor: byId("month-sensor").value.trim(),
    mfrom: byId("month-from").value,
    mto: byId("month-to").value,
    ...openHours,
    rsensor: byId("reading-sensor").value.trim(),
    reading: openReading.reading,
  };
}

// The months shown by default: the six to the range's last day.
function defaultMonths(to) {
  const start = new Date(Date.parse(to.slice(0, 7) + "-01T00:00:00Z"));
  start.setUTCMonth(start.getUTCMonth() - 5);
  byId("month-from").value = isoDay(start).slice(0, 7);
  byId("month-to").value = to.slice(0, 7);
}

async function render() {
  let values = read();
  history.replaceState(null, "", `?${new URLSearchParams(values).toString()}`);
  const status = byId("status");
  document.body.dataset.state = "loading";
  status.textContent = "Loading…";
  try {
    let drawn = await drawHeatmap(values.from, values.to, extraIds(values.sensors));
    const told = [];
    if (drawn.empty) {
      const where = await whereTheReportsAre(values, drawn);
      told.push(where.said);
      if (where.range) {
        byId("from").value = where.range.from;
        byId("to").value = where.range.to;
        if (!monthsChosen) defaultMonths(where.range.to);
        values = read();
        drawn = await drawHeatmap(values.from, values.to, extraIds(values.sensors));
      }
    }
    [rangeChosen, monthsChosen] = [true, true]; // from now on, the ranges are the reader's
    tell([...told, ...drawn.lines]);
    await drawMonths(values.sensor, values.mfrom, values.mto);
    await drawReadings(values.rsensor, values.reading, values.from, values.to);
    if (SENSOR_ID.test(values.hsensor) && values.hday) await drawHours(values.hsensor, values.hday);
    history.replaceState(null, "", `?${new URLSearchParams(read()).toString()}`); // the reading shown
    const failed = drawn.failed ? `, ${drawn.failed} of them not read` : "";
    status.textContent = `${drawn.shown} sensor(s)${failed}, ${values.from} to ${values.to}.`;
    document.body.dataset.state = drawn.shown === 0 ? "empty" : "ready";
  } catch (problem) {
    status.textContent = `Error: ${problem.message}`;
    document.body.dataset.state = "error";
  }
}

document.addEventListener("DOMContentLoaded", () => {
  fill(defaults(new URLSearchParams(window.location.search)));
  for (const form of [byId("range-form"), byId("months-form"), byId("readings-form")]) {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      render();
    });
  }
  byId("heatmap").addEventListener("click", (event) => {
    const row = event.target.closest("tr[data-sensor]");
    if (!row) return;
    const day = event.target.closest("td[data-day]");
    if (day && !day.dataset.malformed) {
      openHours.hsensor = row.dataset.sensor;
      openHours.hday = day.dataset.day;
    }
    byId("month-sensor").value = row.dataset.sensor;
    const charted = chartIds(byId("reading-sensor").value).ids; // the row's sensor joins the chart's
    if (!charted.includes(row.dataset.sensor)) byId("reading-sensor").value = [...charted, row.dataset.sensor].join(", ");
    render();
  });
  byId("reading-name").addEventListener("change", (event) => {
    openReading.reading = event.target.value;
    render();
  });
  byId("readings-chart").addEventListener("click", (event) => {
    const day = event.target.closest("g[data-day]");
    if (!day || day.dataset.malformed) return;
    openHours.hsensor = day.dataset.sensor;
    openHours.hday = day.dataset.day;
    render();
  });
  render();
});
