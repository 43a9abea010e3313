// chaos report: timeline, latency and throughput drawn on canvases from the embedded JSON.
// Plain JS, no libraries, no network. Only visible operations are drawn, and bars narrower than
// a pixel are merged per pixel, so 100,000 operations stay fast.
(function () {
  'use strict';
  var el = document.getElementById('chaos-data');
  if (!el) return;
  var D = JSON.parse(el.textContent);
  var O = D.op, N = O.s.length, END = Math.max(D.end, 1);
  var OUT = ['#2f8f46', '#c2410c', '#b7950b'], OUTNAME = ['ok', 'fail', 'info (unknown)'];
  var KIND = ['#2563eb', '#db2777', '#059669', '#d97706', '#7c3aed', '#0891b2', '#65a30d', '#dc2626'];
  var SEG = { 'down': '#374151', 'paused': '#60a5fa', 'cut off': '#a78bfa', 'restarting': '#374151', 'not answering': '#9ca3af', 'thread held': '#f97316' };
  var tip = document.getElementById('tip');
  // Times are microseconds from the workload's start (the scenario's `at:`); the cluster's
  // start, before 0, is drawn as a narrow phase of its own while the view begins at 0.
  var PRE_US = D.t0 || 0, PRE = PRE_US > 0 ? 86 : 0;
  var view = { t0: 0, t1: END * 1.01 };
  var keyFilter = -1;
  var dpr = window.devicePixelRatio || 1;

  // Violation ops: the op that cannot be placed (red) and its newer witness (amber).
  var bad = {}, wit = {};
  D.viol.forEach(function (v) {
    if (v.bad !== null && v.bad !== undefined) bad[v.bad] = 1;
    if (v.witness !== null && v.witness !== undefined) wit[v.witness] = 1;
  });

  // Per lane: op indexes in invocation order (ids are in invocation order already). An op that
  // never completed is drawn until the next op of its lane (its process handed the lane on).
  var lanes = D.lanes.map(function () { return []; });
  var maxDur = D.lanes.map(function () { return 0; });
  var CAP = new Float64Array(N);
  for (var i = 0; i < N; i++) lanes[O.l[i]].push(i);
  lanes.forEach(function (arr, l) {
    for (var j = 0; j < arr.length; j++) {
      var i = arr[j];
      CAP[i] = O.e[i] >= 0 ? O.e[i] : (j + 1 < arr.length ? Math.max(O.s[arr[j + 1]], O.s[i]) : END);
      if (CAP[i] - O.s[i] > maxDur[l]) maxDur[l] = CAP[i] - O.s[i];
    }
  });

  function fmtT(us) { return (us / 1e6).toFixed(3) + ' s'; }
  function fmtPhase(us) { return us < 0 ? fmtT(us) + ' (cluster start)' : fmtT(us); }
  function fmtMs(us) { var m = us / 1000; return m >= 100 ? m.toFixed(0) + ' ms' : m.toFixed(2) + ' ms'; }
  function lowerBound(arr, t, get) {
    var lo = 0, hi = arr.length;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (get(arr[mid]) < t) lo = mid + 1; else hi = mid; }
    return lo;
  }
  function niceStep(span, n) {
    var raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }
  function setup(canvas, h) {
    var w = canvas.parentNode.clientWidth || 1000;
    canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);
    canvas.style.height = h + 'px';
    var ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return { ctx: ctx, w: w, h: h };
  }
  var LEFT = 86, RIGHT = 10;
  // Width of the cluster's phase: shown while the view begins at the workload's start.
  function pre() { return PRE && view.t0 <= 0 ? PRE : 0; }
  function xOf(t, w) {
    var p = pre();
    if (p && t < 0) return LEFT + p * Math.max(0, 1 + t / PRE_US);
    var a = p ? 0 : view.t0;
    return LEFT + p + (t - a) / (view.t1 - a) * (w - LEFT - RIGHT - p);
  }
  function tOf(x, w) {
    var p = pre();
    if (p && x < LEFT + p) return -PRE_US * (1 - (x - LEFT) / p);
    var a = p ? 0 : view.t0;
    return a + (x - LEFT - p) / (w - LEFT - RIGHT - p) * (view.t1 - a);
  }
  // The cluster's start, before the workload: a grey phase, labelled.
  function clusterPhase(ctx, top, h, label) {
    var p = pre(); if (!p) return;
    ctx.fillStyle = '#eef0f3'; ctx.fillRect(LEFT, top, p - 2, h);
    if (label) {
      ctx.fillStyle = '#475467'; ctx.font = '11px system-ui,sans-serif';
      ctx.fillText('cluster start', LEFT + 4, top + 12);
      ctx.fillText((PRE_US / 1e6).toFixed(1) + ' s', LEFT + 4, top + 25);
    }
  }
  // Fault labels in rows, so that none is drawn over another: each goes into the first row
  // whose last label ended to its left; one that fits in no row is left to the hover.
  var LABEL_ROWS = 4;
  function labelRows(ctx, w) {
    ctx.font = '11px system-ui,sans-serif';
    var items = D.win.map(function (f) { return [f[0], f[2], 0]; }).concat((D.inst || []).map(function (f) { return [f[0], f[1], 1]; }));
    items.sort(function (a, b) { return a[0] - b[0]; });
    var ends = [], out = [];
    items.forEach(function (it) {
      var x = Math.max(xOf(it[0], w), LEFT);
      if (x > w - RIGHT) return;
      var tw = ctx.measureText(it[1]).width + 10;
      for (var r = 0; r < LABEL_ROWS; r++) {
        if (ends[r] === undefined || ends[r] <= x) { ends[r] = x + tw; out.push([x, r, it[1], it[2]]); return; }
      }
    });
    return { rows: Math.max(1, ends.length), items: out };
  }

  function bands(ctx, w, top, h, labels) {
    clusterPhase(ctx, top, h, false);
    D.win.forEach(function (f) {
      var a = Math.max(xOf(f[0], w), LEFT), b = Math.min(xOf(f[1], w), w - RIGHT);
      if (b < LEFT || a > w - RIGHT) return;
      ctx.fillStyle = 'rgba(124,58,237,0.11)';
      ctx.fillRect(a, top, Math.max(b - a, 1.5), h);
      ctx.fillStyle = 'rgba(124,58,237,0.55)';
      ctx.fillRect(a, top, 1, h);
    });
    (D.inst || []).forEach(function (f) {
      var a = xOf(f[0], w);
      if (a < LEFT || a > w - RIGHT) return;
      ctx.fillStyle = 'rgba(190,18,60,0.7)'; ctx.fillRect(a, top, 1.5, h);
    });
    if (labels) {
      ctx.font = '11px system-ui,sans-serif';
      labels.items.forEach(function (it) {
        ctx.fillStyle = it[3] ? '#9f1239' : '#5b21b6';
        ctx.fillText(it[2], it[0] + 3, top + 11 + it[1] * 13);
      });
    }
  }
  function axis(ctx, w, y, h) {
    var step = niceStep(view.t1 - view.t0, Math.max(2, Math.floor((w - LEFT) / 110)));
    ctx.font = '11px system-ui,sans-serif'; ctx.fillStyle = '#667085'; ctx.strokeStyle = '#eef0f3';
    ctx.textAlign = 'center';
    var from = pre() ? 0 : view.t0;
    step = niceStep(view.t1 - from, Math.max(2, Math.floor((w - LEFT - pre()) / 110)));
    for (var t = Math.ceil(from / step) * step; t <= view.t1; t += step) {
      var x = xOf(t, w);
      ctx.beginPath(); ctx.moveTo(x + 0.5, y + 14); ctx.lineTo(x + 0.5, y + h); ctx.stroke();
      var digits = step >= 1e6 ? 0 : step >= 1e5 ? 1 : step >= 1e4 ? 2 : 3;
      ctx.fillText((t / 1e6).toFixed(digits) + ' s', x, y + 11);
    }
    ctx.textAlign = 'left';
  }

  // ---- timeline ----
  var tl = document.getElementById('tl');
  var TL = {};
  function drawTimeline() {
    if (!tl) return;
    var nodes = D.nodes.length, nl = D.lanes.length;
    var laneH = Math.max(3, Math.min(18, Math.floor(520 / Math.max(nl, 1))));
    var w0 = tl.parentNode.clientWidth || 1000;
    var rows = labelRows(tl.getContext('2d'), w0);
    var AX = 18, BAND = 6 + rows.rows * 13, NODEH = 15;
    var nodeTop = AX + BAND, laneTop = nodeTop + nodes * NODEH + 8;
    var h = laneTop + nl * laneH + 6;
    var c = setup(tl, h), ctx = c.ctx, w = c.w;
    TL = { laneH: laneH, laneTop: laneTop, nodeTop: nodeTop, NODEH: NODEH, w: w, h: h, AX: AX };
    ctx.clearRect(0, 0, w, h);
    axis(ctx, w, 0, h);
    bands(ctx, w, AX, h - AX, rows);
    if (pre()) { ctx.fillStyle = '#475467'; ctx.fillText('cluster start', LEFT + 4, nodeTop - 4); }
    // node rows
    ctx.font = '11px system-ui,sans-serif';
    D.nodes.forEach(function (n, i) {
      var y = nodeTop + i * NODEH;
      ctx.fillStyle = '#f3f4f6'; ctx.fillRect(LEFT, y + 2, w - LEFT - RIGHT, NODEH - 4);
      ctx.fillStyle = '#111827'; ctx.fillText(n, 6, y + 11);
    });
    D.segs.forEach(function (s) {
      if (s[0] === null) return;
      var a = Math.max(xOf(s[2], w), LEFT), b = Math.min(xOf(s[3], w), w - RIGHT);
      if (b < LEFT || a > w - RIGHT) return;
      var clock = s[1].indexOf('clock ') === 0;
      ctx.fillStyle = SEG[s[1]] || (clock ? '#f59e0b' : '#9ca3af');
      ctx.fillRect(a, nodeTop + s[0] * NODEH + 2, Math.max(b - a, 2), NODEH - 4);
      // A clock offset is a number to read, not only a colour.
      if (clock && b - a > 60) { ctx.fillStyle = '#111827'; ctx.fillText(s[1], a + 4, nodeTop + s[0] * NODEH + 11); }
    });
    D.marks.forEach(function (m) {
      if (m[1] === null) return;
      var x = xOf(m[0], w);
      if (x < LEFT || x > w - RIGHT) return;
      var y = nodeTop + m[1] * NODEH;
      ctx.fillStyle = '#111827';
      ctx.beginPath(); ctx.moveTo(x - 4, y + 1); ctx.lineTo(x + 4, y + 1); ctx.lineTo(x, y + 7); ctx.fill();
    });
    // lanes
    var every = Math.ceil(12 / laneH);
    for (var L = 0; L < nl; L++) {
      var y = laneTop + L * laneH;
      if (L % 2) { ctx.fillStyle = '#fafbfc'; ctx.fillRect(LEFT, y, w - LEFT - RIGHT, laneH); }
      if (L % every === 0) { ctx.fillStyle = '#667085'; ctx.fillText(D.lanes[L], 6, y + Math.min(laneH, 12) - 1); }
    }
    bands(ctx, w, laneTop, nl * laneH, false);
    var hi = [];
    var pad = laneH > 6 ? 1 : 0;
    for (L = 0; L < nl; L++) {
      var arr = lanes[L], y0 = laneTop + L * laneH + pad, bh = laneH - 2 * pad;
      var from = lowerBound(arr, view.t0 - maxDur[L], function (i) { return O.s[i]; });
      var lastPx = [-1, -1, -1];
      for (var j = from; j < arr.length; j++) {
        var i2 = arr[j], s = O.s[i2];
        if (s > view.t1) break;
        if (keyFilter >= 0 && O.k[i2] !== keyFilter) continue;
        var e2 = CAP[i2];
        if (e2 < view.t0) continue;
        var x0 = xOf(s, w), x1 = xOf(e2, w);
        if (x0 < LEFT) x0 = LEFT;
        if (x1 > w - RIGHT) x1 = w - RIGHT;
        var o = O.o[i2];
        if (bad[i2] || wit[i2]) hi.push([x0, y0, x1, bh, i2]);
        if (x1 - x0 < 1) {
          var px = x0 | 0;
          if (lastPx[o] === px) continue;
          lastPx[o] = px; x1 = px + 1; x0 = px;
        }
        ctx.fillStyle = OUT[o];
        ctx.globalAlpha = O.e[i2] < 0 ? 0.35 : 1;
        ctx.fillRect(x0, y0, Math.max(x1 - x0, 1), bh);
      }
      ctx.globalAlpha = 1;
    }
    hi.forEach(function (r) {
      ctx.strokeStyle = bad[r[4]] ? '#d0212b' : '#d97706'; ctx.lineWidth = 2.5;
      ctx.strokeRect(r[0] - 2, r[1] - 2, Math.max(r[2] - r[0], 2) + 4, r[3] + 4);
      ctx.fillStyle = bad[r[4]] ? '#d0212b' : '#d97706';
      ctx.fillRect(r[0], r[1], Math.max(r[2] - r[0], 2), r[3]);
    });
    ctx.lineWidth = 1;
  }

  function opAt(lane, t, slack) {
    var arr = lanes[lane]; if (!arr) return -1;
    var from = lowerBound(arr, t - slack - maxDur[lane], function (i) { return O.s[i]; });
    var best = -1, bestD = Infinity;
    for (var j = from; j < arr.length; j++) {
      var i = arr[j]; if (O.s[i] > t + slack) break;
      if (keyFilter >= 0 && O.k[i] !== keyFilter) continue;
      var e = CAP[i];
      if (e + slack < t) continue;
      var d = t < O.s[i] ? O.s[i] - t : t > e ? t - e : 0;
      if (d < bestD) { bestD = d; best = i; }
    }
    return best;
  }
  function opText(i) {
    var e = O.e[i];
    var lines = [O.d[i], 'key ' + D.keys[O.k[i]] + ' · process ' + O.p[i] + (O.n[i] >= 0 ? ' · node ' + D.nodes[O.n[i]] : ''),
      'invoked ' + fmtT(O.s[i]) + (e >= 0 ? ', completed ' + fmtT(e) + ' (' + fmtMs(e - O.s[i]) + ')' : ', never completed'),
      'outcome ' + OUTNAME[O.o[i]] + ' · op #' + i];
    if (bad[i]) lines.push('this operation is the violation');
    if (wit[i]) lines.push('acknowledged before the stale read began');
    return lines.join('\n');
  }
  function showTip(ev, text) {
    tip.textContent = text; tip.style.display = 'block';
    var x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth - 8) x = ev.clientX - tip.offsetWidth - 10;
    if (y + tip.offsetHeight > window.innerHeight - 8) y = ev.clientY - tip.offsetHeight - 10;
    tip.style.left = x + 'px'; tip.style.top = y + 'px';
  }
  function hideTip() { tip.style.display = 'none'; }

  function hoverTimeline(ev) {
    var r = tl.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
    if (x < LEFT) { hideTip(); return; }
    var t = tOf(x, TL.w), slack = 3 * (view.t1 - view.t0) / (TL.w - LEFT);
    if (y >= TL.laneTop) {
      var lane = Math.floor((y - TL.laneTop) / TL.laneH), i = opAt(lane, t, slack);
      if (i >= 0) { showTip(ev, opText(i)); return; }
    } else if (y >= TL.nodeTop) {
      var n = Math.floor((y - TL.nodeTop) / TL.NODEH), texts = [];
      D.marks.forEach(function (m) { if (m[1] === n && Math.abs(m[0] - t) < slack * 2) texts.push(D.nodes[n] + ' ' + m[2] + ' at ' + fmtPhase(m[0])); });
      D.segs.forEach(function (s) { if (s[0] === n && s[2] <= t && t <= s[3]) texts.push(D.nodes[n] + ' ' + s[1] + ' ' + fmtPhase(s[2]) + ' – ' + fmtT(s[3])); });
      if (texts.length) { showTip(ev, texts.join('\n')); return; }
    }
    var fs = D.win.filter(function (f) { return f[0] <= t && t <= f[1]; }).map(function (f) { return f[2] + '\n' + fmtT(f[0]) + ' – ' + fmtT(f[1]); });
    (D.inst || []).forEach(function (f) { if (Math.abs(f[0] - t) < slack * 2) fs.push(f[1] + ' at ' + fmtT(f[0])); });
    if (fs.length && y >= TL.AX) { showTip(ev, fs.join('\n')); return; }
    if (t < 0) { showTip(ev, 'the cluster starting: ' + (PRE_US / 1e6).toFixed(1) + ' s before the workload'); return; }
    hideTip();
  }

  // ---- latency and throughput ----
  var lat = document.getElementById('lat'), thr = document.getElementById('thr');
  function kindLegend(ctx, w) {
    ctx.font = '11px system-ui,sans-serif';
    var x = w - RIGHT - 4;
    for (var k = D.fs.length - 1; k >= 0; k--) {
      var tw = ctx.measureText(D.fs[k]).width;
      x -= tw + 18;
      ctx.fillStyle = KIND[k % KIND.length]; ctx.fillRect(x, 20, 9, 9);
      ctx.fillStyle = '#374151'; ctx.fillText(D.fs[k], x + 12, 28);
    }
  }
  function drawLatency() {
    if (!lat) return;
    var c = setup(lat, 260), ctx = c.ctx, w = c.w, h = c.h, top = 18, bottom = h - 6;
    ctx.clearRect(0, 0, w, h);
    var from = lowerBound(O.s, view.t0, function (v) { return v; }), to = lowerBound(O.s, view.t1, function (v) { return v; });
    var lo = Infinity, hi2 = 0, i;
    for (i = from; i < to; i++) if (O.e[i] >= 0) { var d = O.e[i] - O.s[i]; if (d > 0 && d < lo) lo = d; if (d > hi2) hi2 = d; }
    if (!(hi2 > 0)) { lo = 100; hi2 = 1e6; }
    lo = Math.max(10, Math.pow(10, Math.floor(Math.log10(lo)))); hi2 = Math.pow(10, Math.ceil(Math.log10(hi2)));
    if (hi2 <= lo) hi2 = lo * 10;
    var ly0 = Math.log10(lo), ly1 = Math.log10(hi2);
    function yOf(d) { return bottom - (Math.log10(Math.max(d, lo)) - ly0) / (ly1 - ly0) * (bottom - top); }
    axis(ctx, w, 0, h);
    bands(ctx, w, top, bottom - top, false);
    ctx.fillStyle = '#667085'; ctx.font = '11px system-ui,sans-serif';
    for (var p = ly0; p <= ly1; p++) {
      var yy = yOf(Math.pow(10, p));
      ctx.strokeStyle = '#eef0f3'; ctx.beginPath(); ctx.moveTo(LEFT, yy + 0.5); ctx.lineTo(w - RIGHT, yy + 0.5); ctx.stroke();
      ctx.fillText(fmtMs(Math.pow(10, p)).replace('.00', ''), 6, yy + 4);
    }
    var seen = {};
    for (i = from; i < to; i++) {
      if (O.e[i] < 0) continue;
      if (keyFilter >= 0 && O.k[i] !== keyFilter) continue;
      var x = xOf(O.s[i], w) | 0, y = yOf(O.e[i] - O.s[i]) | 0, key = (x * 4096 + y) * 16 + O.f[i];
      if (seen[key]) continue; seen[key] = 1;
      ctx.fillStyle = O.o[i] === 0 ? KIND[O.f[i] % KIND.length] : OUT[O.o[i]];
      ctx.globalAlpha = O.o[i] === 0 ? 0.7 : 0.9;
      ctx.fillRect(x - 1, y - 1, O.o[i] === 0 ? 2.5 : 4, O.o[i] === 0 ? 2.5 : 4);
    }
    ctx.globalAlpha = 1;
    kindLegend(ctx, w);
    ctx.fillStyle = '#374151'; ctx.fillText('latency (log) — failed and unknown in orange', LEFT + 4, 30);
  }
  function drawThroughput() {
    if (!thr) return;
    var c = setup(thr, 200), ctx = c.ctx, w = c.w, h = c.h, top = 36, bottom = h - 6;
    ctx.clearRect(0, 0, w, h);
    var nb = Math.max(10, Math.min(200, Math.floor((w - LEFT) / 6))), bw = (view.t1 - view.t0) / nb;
    var counts = D.fs.map(function () { return new Float64Array(nb); }), max = 1;
    var from = lowerBound(O.s, view.t0, function (v) { return v; }), to = lowerBound(O.s, view.t1, function (v) { return v; });
    for (var i = from; i < to; i++) {
      if (O.o[i] !== 0) continue;
      if (keyFilter >= 0 && O.k[i] !== keyFilter) continue;
      var b = Math.floor((O.s[i] - view.t0) / bw);
      if (b >= 0 && b < nb) counts[O.f[i]][b] += 1;
    }
    var scale = 1e6 / bw;
    counts.forEach(function (a) { for (var j = 0; j < nb; j++) if (a[j] * scale > max) max = a[j] * scale; });
    axis(ctx, w, 0, h);
    bands(ctx, w, 18, bottom - 18, false);
    function yOf(v) { return bottom - v / max * (bottom - top); }
    ctx.fillStyle = '#667085'; ctx.font = '11px system-ui,sans-serif';
    ctx.fillText(Math.round(max) + ' ok/s', 6, top + 4); ctx.fillText('0', 6, bottom);
    counts.forEach(function (a, k) {
      ctx.strokeStyle = KIND[k % KIND.length]; ctx.lineWidth = 1.6; ctx.beginPath();
      for (var j = 0; j < nb; j++) {
        var x = xOf(view.t0 + (j + 0.5) * bw, w), y = yOf(a[j] * scale);
        if (j) ctx.lineTo(x, y); else ctx.moveTo(x, y);
      }
      ctx.stroke();
    });
    ctx.lineWidth = 1;
    kindLegend(ctx, w);
    ctx.fillStyle = '#374151'; ctx.fillText('throughput of ok operations per kind', LEFT + 4, 30);
  }

  var pending = false;
  function redraw() {
    if (pending) return; pending = true;
    window.requestAnimationFrame(function () { pending = false; drawTimeline(); drawLatency(); drawThroughput(); });
  }
  function zoom(f, at) {
    var span = view.t1 - view.t0, ns = Math.min(Math.max(span * f, 50), END * 1.5);
    var c = at === undefined ? view.t0 + span / 2 : at, r = (c - view.t0) / span;
    view.t0 = c - r * ns; view.t1 = view.t0 + ns;
    clampView(); redraw();
  }
  function clampView() {
    var span = view.t1 - view.t0, lo = PRE ? 0 : -END * 0.02, hi = END * 1.03;
    if (view.t0 < lo) { view.t0 = lo; view.t1 = lo + span; }
    if (view.t1 > hi) { view.t1 = hi; view.t0 = Math.max(lo, hi - span); }
  }
  [tl, lat, thr].forEach(function (cv) {
    if (!cv) return;
    cv.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      var r = cv.getBoundingClientRect();
      zoom(ev.deltaY > 0 ? 1.25 : 0.8, tOf(ev.clientX - r.left, r.width));
    }, { passive: false });
    var drag = null;
    cv.addEventListener('mousedown', function (ev) { drag = { x: ev.clientX, t0: view.t0, t1: view.t1, w: cv.getBoundingClientRect().width }; });
    window.addEventListener('mouseup', function () { drag = null; });
    window.addEventListener('mousemove', function (ev) {
      if (!drag) return;
      var dt = (ev.clientX - drag.x) / (drag.w - LEFT - RIGHT) * (drag.t1 - drag.t0);
      view.t0 = drag.t0 - dt; view.t1 = drag.t1 - dt; clampView(); redraw();
    });
    cv.addEventListener('dblclick', function () { view.t0 = 0; view.t1 = END * 1.01; redraw(); });
    cv.addEventListener('mouseleave', hideTip);
  });
  if (tl) tl.addEventListener('mousemove', hoverTimeline);
  if (lat) lat.addEventListener('mousemove', function (ev) {
    var r = lat.getBoundingClientRect(), t = tOf(ev.clientX - r.left, r.width);
    var fs = D.win.filter(function (f) { return f[0] <= t && t <= f[1]; });
    if (fs.length) showTip(ev, fs.map(function (f) { return f[2]; }).join('\n')); else hideTip();
  });

  document.querySelectorAll('[data-zoom]').forEach(function (b) {
    b.addEventListener('click', function () {
      var z = b.getAttribute('data-zoom');
      if (z === 'in') zoom(0.5); else if (z === 'out') zoom(2); else { view.t0 = 0; view.t1 = END * 1.01; redraw(); }
    });
  });
  var sel = document.getElementById('key-filter');
  if (sel) sel.addEventListener('change', function () { keyFilter = sel.value === '' ? -1 : D.keys.indexOf(sel.value); redraw(); });
  document.querySelectorAll('[data-focus]').forEach(function (b) {
    b.addEventListener('click', function () {
      var a = b.getAttribute('data-focus');
      var v = D.viol.filter(function (x) { return x.anchor === a; })[0];
      if (!v || v.bad === null || v.bad === undefined) return;
      var s = O.s[v.bad], e = O.e[v.bad] < 0 ? s : O.e[v.bad];
      if (v.witness !== null && v.witness !== undefined) s = Math.min(s, O.s[v.witness]);
      var span = Math.max(e - s, 1000) * 3 + 200000;
      view.t0 = s - span / 3; view.t1 = view.t0 + span; clampView();
      keyFilter = D.keys.indexOf(v.key); if (sel) sel.value = v.key;
      redraw();
      document.getElementById('timeline').scrollIntoView();
    });
  });
  document.querySelectorAll('[data-copy]').forEach(function (b) {
    b.addEventListener('click', function () {
      var t = document.getElementById(b.getAttribute('data-copy')).textContent;
      if (navigator.clipboard) navigator.clipboard.writeText(t).then(function () { b.textContent = 'copied'; }, function () {});
    });
  });
  // Tables of witnesses sort by a click on a column (numbers by their data-v).
  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('thead th').forEach(function (th, col) {
      th.style.cursor = 'pointer'; th.title = 'sort';
      th.addEventListener('click', function () {
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var dir = th.getAttribute('data-dir') === 'asc' ? -1 : 1;
        th.setAttribute('data-dir', dir === 1 ? 'asc' : 'desc');
        function val(r) {
          var c = r.cells[col]; if (!c) return '';
          var v = c.getAttribute('data-v'); if (v !== null) return parseFloat(v);
          var t = c.textContent.trim(), n = parseFloat(t);
          return isNaN(n) || String(n) !== t ? t : n;
        }
        rows.sort(function (a, b) {
          var x = val(a), y = val(b);
          return (typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y))) * dir;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  window.addEventListener('resize', redraw);
  drawTimeline(); drawLatency(); drawThroughput();
  document.body.setAttribute('data-drawn', String(N));
  var vs = document.getElementById('violations');
  if (vs) document.body.setAttribute('data-violations-px', String(Math.round(vs.getBoundingClientRect().height)));
})();
