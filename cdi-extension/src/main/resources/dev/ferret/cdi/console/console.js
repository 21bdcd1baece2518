'use strict';
const base = location.pathname.replace(/\/(index\.html)?$/, '');
let session = { operator: false, csrfToken: '' };
let shownDeadLetters = null;
let mode = '';
// the shard rows shown: filters and a page, so the console stays light at tens of thousands of shards
const pageSize = 100;
let filters = {};
let offset = 0;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') node.className = v; else if (k.startsWith('data-')) node.setAttribute(k, v); else node[k] = v;
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

function ago(millis) {
  if (millis === undefined) return '–';
  if (millis < 1000) return millis + ' ms ago';
  if (millis < 120000) return Math.round(millis / 1000) + ' s ago';
  return Math.round(millis / 60000) + ' min ago';
}

function spark(values) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('class', 'spark'); svg.setAttribute('width', '90'); svg.setAttribute('height', '18');
  if (values.length > 1) {
    const max = Math.max(...values, 1);
    const points = values.map((v, i) => (i * 90 / (values.length - 1)).toFixed(1) + ',' + (17 - v * 16 / max).toFixed(1));
    const line = document.createElementNS(ns, 'polyline');
    line.setAttribute('points', points.join(' ')); line.setAttribute('fill', 'none');
    line.setAttribute('stroke', '#3a6fd8'); line.setAttribute('stroke-width', '1.5');
    svg.append(line);
  }
  return svg;
}

function say(text, bad) {
  const message = document.getElementById('message');
  message.textContent = text;
  message.className = bad ? 'bad' : 'good';
}

async function act(action, params) {
  const query = new URLSearchParams(params).toString();
  const response = await fetch(base + '/api/' + action + '?' + query, {
    method: 'POST', credentials: 'same-origin', headers: { 'X-Ferret-CSRF': session.csrfToken }
  });
  const body = await response.json().catch(() => ({}));
  if (response.ok) {
    say(action + ' ' + Object.values(params).join(' ') + ': ' + body.outcome, false);
  } else {
    say(action + ' ' + Object.values(params).join(' ') + ' refused (' + response.status + '): ' + body.error, true);
  }
  await refresh();
  if (shownDeadLetters) await showDeadLetters(shownDeadLetters);
}

function actionButton(label, action, params) {
  const attrs = { type: 'button', 'data-action': action, onclick: () => act(action, params) };
  for (const [k, v] of Object.entries(params)) attrs['data-' + k] = v;
  return el('button', attrs, label);
}

function shardRow(shard) {
  const actions = el('td', { class: 'actions' });
  if (session.operator) {
    if (shard.state === 'RUNNING' || shard.state === 'RETRYING') actions.append(actionButton('Hold', 'hold', { shard: shard.name }));
    if (shard.state === 'PAUSED' || shard.state === 'HELD' || shard.state === 'STOPPED') actions.append(actionButton('Restart', 'restart', { shard: shard.name }));
    if (shard.state === 'PAUSED' && shard.errorType === 'dev.ferret.daemon.ApplyFailedException') {
      actions.append(actionButton('Skip to dead letters', 'skip', { shard: shard.name }));
    }
    if (shard.state !== 'REBUILDING') actions.append(actionButton('Rebuild', 'rebuild', { projection: shard.projection }));
  }
  const dead = el('td', { class: 'num dead-letter-count' }, shard.deadLetters);
  if (shard.deadLetters > 0) {
    dead.append(' ', el('button', { type: 'button', 'data-show-dead-letters': shard.name,
      onclick: () => showDeadLetters(shard.name) }, 'Show'));
  }
  const error = el('td', { class: 'error' }, shard.error ? shard.errorType + ': ' + shard.error : '');
  if (shard.retrying) error.prepend('retrying · ');
  return el('tr', { class: 'shard', 'data-shard': shard.name, 'data-state': shard.state },
    el('td', {}, shard.name),
    el('td', {}, el('span', { class: 'state ' + shard.state }, shard.state),
      mode === 'HOT_COLD' ? el('div', { class: 'muted node' }, shard.runsHere ? 'on this node' : 'on another node') : '',
      shard.servesReads ? '' : el('div', { class: 'muted reads', 'data-serves-reads': 'false' },
        'reads go to another version')),
    el('td', { class: 'num' }, shard.progression),
    el('td', { class: 'num' }, shard.highWaterMark),
    el('td', { class: 'num lag' }, shard.lag),
    el('td', { class: 'num' }, spark(shard.rateHistory), ' ', shard.eventsPerSecond.toFixed(1)),
    el('td', {}, ago(shard.sinceLastCommitMillis)),
    dead, error, actions);
}

function rebuildRow(r) {
  const percent = r.total === 0 ? 100 : Math.floor(100 * r.done / r.total);
  const bar = el('div', { class: 'bar' }, el('div', {}));
  bar.firstChild.style.width = percent + '%';
  return el('tr', { class: 'rebuild ' + r.state, 'data-state': r.state, 'data-percent': percent },
    el('td', {}, r.label),
    el('td', {}, bar, ' ', percent + '% (' + r.done + ' of ' + r.total + ')'),
    el('td', { class: 'num' }, Math.round(r.eventsPerSecond) + '/s'),
    el('td', {}, r.secondsLeft < 0 ? '–' : r.secondsLeft + ' s'),
    el('td', {}, r.state), el('td', {}, r.startedBy));
}

async function showDeadLetters(shard) {
  shownDeadLetters = shard;
  const response = await fetch(base + '/api/dead-letters?' + new URLSearchParams({ shard, limit: 50 }),
    { credentials: 'same-origin' });
  const body = await response.json();
  const section = document.getElementById('dead-letters-section');
  section.hidden = false;
  document.getElementById('dead-letters-shard').textContent = shard;
  const rows = (body.deadLetters || []).map(d => {
    let json = d.eventJson;
    try { json = JSON.stringify(JSON.parse(d.eventJson), null, 2); } catch (e) { /* shown as stored */ }
    const actions = el('td', {});
    if (session.operator) {
      actions.append(actionButton('Replay', 'replay', { shard, id: d.id }),
        actionButton('Discard', 'discard', { shard, id: d.id }));
    }
    return el('tr', { class: 'dead-letter', 'data-id': d.id },
      el('td', { class: 'num' }, d.id), el('td', { class: 'num' }, d.sequence), el('td', {}, d.streamId),
      el('td', {}, d.eventType), el('td', { class: 'error' }, d.errorType + ': ' + d.message),
      el('td', {}, el('pre', { class: 'event-json' }, json)), actions);
  });
  const tbody = document.querySelector('#dead-letters tbody');
  tbody.replaceChildren(...rows);
  if (rows.length === 0) tbody.append(el('tr', {}, el('td', { colSpan: 7, class: 'muted' }, 'none')));
}

// the counts before the rows: with thousands of shards, the states and the worst lags are the first look
function summaryOf(summary) {
  const states = Object.entries(summary.byState).map(([state, n]) => n + ' ' + state).join(', ');
  return el('div', {},
    el('div', {}, summary.shards + ' shards' + (states ? ': ' + states : '')),
    ...summary.projections.map(p => el('div', { class: 'muted' }, p.projection + ': ' + p.shards + ' shard'
      + (p.shards === 1 ? '' : 's') + ', worst lag ' + p.worstLag + (p.worstShard && p.shards > 1 ? ' (' + p.worstShard + ')' : ''))),
    ...(summary.databases.length > 1 ? summary.databases.map(d => el('div', { class: 'muted database-summary' },
      'database ' + d.database + ': ' + d.shards + ' shard' + (d.shards === 1 ? '' : 's') + ', worst lag ' + d.worstLag
      + (d.worstShard && d.shards > 1 ? ' (' + d.worstShard + ')' : ''))) : []));
}

function statusQuery() {
  const params = { offset, limit: pageSize };
  for (const [k, v] of Object.entries(filters)) if (v) params[k] = v;
  return new URLSearchParams(params).toString();
}

function pageInfo(page) {
  const first = page.matched === 0 ? 0 : page.offset + 1;
  const last = Math.min(page.offset + page.limit, page.matched);
  document.getElementById('page-info').textContent = 'shards ' + first + '–' + last + ' of ' + page.matched
    + (Object.values(filters).some(v => v) ? ' matching' : '');
  document.getElementById('page-previous').disabled = page.offset === 0;
  document.getElementById('page-next').disabled = !page.hasMore;
}

async function refresh() {
  const response = await fetch(base + '/api/status?' + statusQuery(), { credentials: 'same-origin' });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    say('status refused (' + response.status + ')' + (body.error ? ': ' + body.error : ''), true);
    return;
  }
  const status = await response.json();
  session = status.session;
  mode = status.mode;
  document.getElementById('who').textContent = session.user + (session.operator ? ' (operator)' : ' (read-only)');
  document.getElementById('mode').textContent = status.mode + (status.running ? ', running' : ', stopped');
  const health = document.getElementById('health');
  health.textContent = status.healthy ? 'healthy' : 'unhealthy' + (status.livenessProblems.length
    ? ': ' + status.livenessProblems.join('; ') : '');
  health.className = status.healthy ? 'good' : 'bad';
  document.getElementById('summary').replaceChildren(summaryOf(status.summary));
  document.querySelector('#shards tbody').replaceChildren(...status.shards.map(shardRow));
  pageInfo(status.page);
  document.querySelector('#rebuilds tbody').replaceChildren(...status.rebuilds.map(rebuildRow));
  const m = status.highWaterMark;
  const mark = document.getElementById('mark');
  mark.replaceChildren(el('div', {}, 'Mark ', el('b', { id: 'mark-value' }, m.mark), ', highest seen ', m.highestSeen,
      m.stalledForMillis > 0 ? ', stalled for ' + Math.round(m.stalledForMillis / 1000) + ' s' : '',
      ', holes skipped: ', m.totalSkips, ' (', m.totalSkippedSequences, ' sequences)',
      m.error ? el('span', { class: 'error' }, ' – ' + m.error) : ''),
    ...m.recentSkips.map(s => el('div', { class: 'muted' }, 'skipped ' + s.from + '–' + s.to + ' (' + s.reason + ') at ' + s.at)));
  const nodes = document.getElementById('nodes');
  nodes.replaceChildren(status.nodes.length === 0 ? el('div', {}, 'One node (' + status.mode + '): ' + status.node)
    : el('ul', {}, ...status.nodes.map(n => el('li', { class: n.self ? 'good' : '' },
        n.name + (n.self ? ' (this node)' : '') + ', heartbeat ' + ago(n.heartbeatAgeMillis)))));
}

document.getElementById('filters').addEventListener('submit', event => {
  event.preventDefault();
  filters = {};
  for (const name of ['projection', 'tenant', 'database', 'state']) {
    filters[name] = document.getElementById('filter-' + name).value.trim();
  }
  offset = 0;
  refresh();
});
document.getElementById('page-previous').onclick = () => { offset = Math.max(0, offset - pageSize); refresh(); };
document.getElementById('page-next').onclick = () => { offset += pageSize; refresh(); };

refresh();
setInterval(() => refresh().catch(e => say('status failed: ' + e, true)), 2000);
