// Samsa console: the few things a server-rendered page cannot do alone:
// the live plots on the overview and the live tail of the records page.
// No dependencies; every element it touches is found by id or data-*.
"use strict";

(function () {
  const colors = ["#2f6fb3", "#d9822b", "#1a7f37"];

  function drawPlot(canvas, samples) {
    const series = canvas.dataset.series.split(",");
    const unit = canvas.dataset.unit;
    // Draw at the size the page lays the canvas out at, so text stays crisp.
    if (canvas.clientWidth > 0 && canvas.width !== canvas.clientWidth) canvas.width = canvas.clientWidth;
    const ctx = canvas.getContext("2d");
    const w = canvas.width, h = canvas.height, pad = 28;
    ctx.clearRect(0, 0, w, h);
    ctx.font = "11px sans-serif";
    let top = 0;
    for (const s of samples) for (const name of series) top = Math.max(top, s[name] || 0);
    top = top > 0 ? top * 1.1 : 1;
    ctx.strokeStyle = "#d8dee4";
    ctx.beginPath(); ctx.moveTo(pad, 4); ctx.lineTo(pad, h - pad + 4); ctx.lineTo(w - 4, h - pad + 4); ctx.stroke();
    ctx.fillStyle = "#5b6673";
    ctx.fillText(formatNumber(top) + " " + unit, pad + 4, 12);
    if (samples.length === 0) { ctx.fillText("collecting samples…", pad + 4, h / 2); return; }
    const t0 = samples[0].time_ms, t1 = samples[samples.length - 1].time_ms;
    const span = Math.max(t1 - t0, 1);
    ctx.fillText(new Date(t0).toISOString().slice(11, 19), pad, h - 8);
    ctx.fillText(new Date(t1).toISOString().slice(11, 19), w - 60, h - 8);
    series.forEach(function (name, i) {
      ctx.strokeStyle = colors[i % colors.length];
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      samples.forEach(function (s, j) {
        const x = pad + (w - pad - 6) * (samples.length === 1 ? 1 : (s.time_ms - t0) / span);
        const y = h - pad + 4 - (h - pad - 8) * (s[name] || 0) / top;
        if (j === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
      });
      ctx.stroke();
      ctx.fillStyle = colors[i % colors.length];
      ctx.fillText(name.replace(/_/g, " "), w - 160, 14 + 12 * i);
    });
  }

  function formatNumber(n) {
    if (n >= 1e9) return (n / 1e9).toFixed(1) + "G";
    if (n >= 1e6) return (n / 1e6).toFixed(1) + "M";
    if (n >= 1e3) return (n / 1e3).toFixed(1) + "k";
    return n.toFixed(n < 10 ? 2 : 0);
  }

  function startPlots(section) {
    const canvases = section.querySelectorAll("canvas");
    let timer = null;
    function refresh() {
      fetch(section.dataset.source, { credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (body) {
          canvases.forEach(function (c) { drawPlot(c, body.samples); });
          timer = setTimeout(refresh, Math.max(body.interval_ms, 1000));
        })
        .catch(function () { timer = setTimeout(refresh, 5000); });
    }
    refresh();
    window.addEventListener("pagehide", function () { clearTimeout(timer); });
  }

  function cell(text, className) {
    const td = document.createElement("td");
    if (className) td.className = className;
    td.textContent = text;
    return td;
  }

  function pre(value) {
    const td = document.createElement("td");
    const p = document.createElement("pre");
    p.className = "kind-" + value.Kind;
    p.textContent = value.Text;
    td.appendChild(p);
    return td;
  }

  function startTail(button) {
    const rows = document.getElementById("tail-rows");
    const status = document.getElementById("tail-status");
    let source = null;
    let count = 0;
    button.addEventListener("click", function () {
      if (source) {
        source.close(); source = null;
        button.textContent = "Live tail"; status.textContent = "stopped";
        return;
      }
      source = new EventSource(button.dataset.tail);
      button.textContent = "Stop tail";
      status.textContent = "connecting…";
      source.addEventListener("ready", function () { status.textContent = "tailing: new records appear above"; });
      source.addEventListener("record", function (event) {
        const r = JSON.parse(event.data);
        const tr = document.createElement("tr");
        tr.className = "record live";
        // When the row arrived, beside the record's own timestamp.
        tr.dataset.receivedMs = String(Date.now());
        tr.dataset.timestampMs = String(r.TimestampMs);
        tr.appendChild(cell(String(r.Partition)));
        tr.appendChild(cell(String(r.Offset), "offset"));
        tr.appendChild(cell(new Date(r.TimestampMs).toISOString().replace("T", " ")));
        tr.appendChild(pre(r.Key));
        const value = pre(r.Value);
        value.firstChild.classList.add("value");
        tr.appendChild(value);
        tr.appendChild(cell((r.Headers || []).map(function (h) { return h.Key + ": " + h.Value.Text; }).join("\n")));
        rows.insertBefore(tr, rows.firstChild);
        count++;
        // Keep the page bounded however long the tail runs.
        while (rows.children.length > 500) rows.removeChild(rows.lastChild);
        status.textContent = "tailing: " + count + " new records";
      });
      source.addEventListener("skipped", function (event) {
        status.textContent = "tailing: " + JSON.parse(event.data).skipped + " records skipped (too fast to show)";
      });
      source.addEventListener("end", function (event) {
        status.textContent = "tail ended: " + JSON.parse(event.data).reason;
        source.close(); source = null; button.textContent = "Live tail";
      });
    });
    window.addEventListener("pagehide", function () { if (source) source.close(); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    const plots = document.getElementById("plots");
    if (plots) startPlots(plots);
    const tail = document.getElementById("tail-toggle");
    if (tail) startTail(tail);
  });
})();
