// The page of `sensor-digest up`: a heatmap of day counts (sensors by days) and a sensor's months,
// every figure an answer of the read API on the same origin. Sensor names and ids come from
// producers and operators: they are inserted as text (textContent), never as markup.
"use strict";

const DAY_MS = 86400000;
const MAX_DAYS = 366;
const SENSOR_ID = /^[0-9]{1,16}$/;

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

async function registeredSensors() {
  const sensors = [];
  await allPages("/sensors", {}, (page) => sensors.push(...page.sensors));
  return sensors;
}

async function dayCounts(sensorId, from, to) {
  const days = {};
  await allPages(`/sensors/${encodeURIComponent(sensorId)}/days`, { from, to }, (page) => Object.assign(days, page.days));
  return days;
}

async function monthCounts(sensorId, from, to) {
  const months = {};
  await allPages(`/sensors/${encodeURIComponent(sensorId)}/months`, { from, to }, (page) =>
    Object.assign(months, page.months)
  );
  return months;
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

async function drawHeatmap(from, to, extra) {
  const registered = await registeredSensors();
  const rows = new Map(registered.map((s) => [s.sensor_id, s]));
  for (const id of extra) if (!rows.has(id)) rows.set(id, { sensor_id: id, name: null, timezone: null });
  const sensors = [...rows.values()].sort((a, b) => a.sensor_id - b.sensor_id);
  const counts = await Promise.all(sensors.map((s) => dayCounts(s.sensor_id, from, to)));
  const days = daysBetween(from, to);
  const most = Math.max(1, ...counts.flatMap((c) => Object.values(c)));

  const table = byId("heatmap");
  table.replaceChildren();
  const head = element("thead");
  const headRow = element("tr");
  headRow.append(element("th", "sensor"));
  days.forEach((day, i) => {
    const th = element("th", i === 0 || day.endsWith("-01") ? day.slice(5) : day.slice(8));
    th.title = day;
    headRow.append(th);
  });
  headRow.append(element("th", "total"));
  head.append(headRow);
  const body = element("tbody");
  sensors.forEach((sensor, i) => {
    const row = element("tr");
    row.dataset.sensor = String(sensor.sensor_id);
    const label = element("th", sensor.name === null ? `${sensor.sensor_id}` : `${sensor.sensor_id} · ${sensor.name}`);
    label.className = "sensor-name";
    if (sensor.timezone) label.title = sensor.timezone;
    row.append(label);
    let total = 0;
    for (const day of days) {
      const count = counts[i][day] || 0;
      total += count;
      row.append(cell(day, count, most));
    }
    row.append(element("td", total, "total"));
    body.append(row);
  });
  table.append(head, body);

  const legend = byId("legend");
  legend.replaceChildren(element("span", null, "level-0"), document.createTextNode(" none, then up to "));
  for (let l = 1; l <= 4; l += 1) legend.append(element("span", null, `level-${l}`));
  legend.append(document.createTextNode(` ${most} reports a day`));
  return sensors.length;
}

async function drawMonths(sensorId, from, to) {
  const table = byId("months");
  table.replaceChildren();
  if (sensorId === "") {
    byId("months-title-line").textContent = "Pick a sensor to see its months.";
    return;
  }
  if (!SENSOR_ID.test(sensorId)) throw new Error(`not a sensor id: ${sensorId}`);
  const months = await monthCounts(sensorId, from, to);
  const names = Object.keys(months).sort();
  byId("months-title-line").textContent = `Sensor ${sensorId}: ${names.length} month(s) with reports, from its summary items.`;
  const most = Math.max(1, ...names.flatMap((m) => Object.values(months[m])));
  const body = element("tbody");
  for (const month of names) {
    const row = element("tr");
    row.dataset.month = month;
    row.append(element("th", month));
    let total = 0;
    for (const day of monthDays(month)) {
      const count = months[month][day] || 0;
      total += count;
      row.append(cell(day, count, most));
    }
    row.append(element("td", total, "total"));
    body.append(row);
  }
  table.append(body);
}

function defaults(params) {
  const today = new Date();
  const to = params.get("to") || isoDay(today);
  const from = params.get("from") || isoDay(new Date(Date.parse(to + "T00:00:00Z") - 29 * DAY_MS));
  const mto = params.get("mto") || to.slice(0, 7);
  const start = new Date(Date.parse(mto + "-01T00:00:00Z"));
  start.setUTCMonth(start.getUTCMonth() - 5);
  const mfrom = params.get("mfrom") || isoDay(start).slice(0, 7);
  return { from, to, sensors: params.get("sensors") || "", sensor: params.get("sensor") || "", mfrom, mto };
}

function fill(values) {
  byId("from").value = values.from;
  byId("to").value = values.to;
  byId("sensors").value = values.sensors;
  byId("month-sensor").value = values.sensor;
  byId("month-from").value = values.mfrom;
  byId("month-to").value = values.mto;
}

function read() {
  return {
    from: byId("from").value,
    to: byId("to").value,
    sensors: byId("sensors").value,
    sensor: byId("month-sensor").value.trim(),
    mfrom: byId("month-from").value,
    mto: byId("month-to").value,
  };
}

async function render() {
  const values = read();
  history.replaceState(null, "", `?${new URLSearchParams(values).toString()}`);
  const status = byId("status");
  document.body.dataset.state = "loading";
  status.textContent = "Loading…";
  try {
    const rows = await drawHeatmap(values.from, values.to, extraIds(values.sensors));
    await drawMonths(values.sensor, values.mfrom, values.mto);
    status.textContent = `${rows} sensor(s), ${values.from} to ${values.to}.`;
    document.body.dataset.state = "ready";
  } catch (problem) {
    status.textContent = `Error: ${problem.message}`;
    document.body.dataset.state = "error";
  }
}

document.addEventListener("DOMContentLoaded", () => {
  fill(defaults(new URLSearchParams(window.location.search)));
  for (const form of [byId("range-form"), byId("months-form")]) {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      render();
    });
  }
  byId("heatmap").addEventListener("click", (event) => {
    const row = event.target.closest("tr[data-sensor]");
    if (!row) return;
    byId("month-sensor").value = row.dataset.sensor;
    render();
  });
  render();
});
