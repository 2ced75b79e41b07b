/* provrag web app: the little script that makes the server-rendered pages quicker to use.
   Without it every view still works (forms post and redirect, links open pages). With it:
   - a form marked data-async posts in the background, shows its progress (with the time spent
     and a Cancel button) and puts the answer in place; the rest of the page stays usable;
   - an answer whose sentences are not checked yet is checked at once, and its verdicts replace it;
   - a citation chip or source opens the evidence beside the answer (below it on a narrow
     screen): the page image with the quote highlighted; ← and → turn the page, Escape closes it.
   Every fragment comes from this server (X-Provrag-Fragment: 1) and is HTML it escaped. */
(function () {
  "use strict";
  var FRAGMENT = {"X-Provrag-Fragment": "1"};
  var panel = document.getElementById("evidence");
  var opener = null;

  function fetchFragment(url, options) {
    options = options || {};
    options.headers = Object.assign({}, FRAGMENT, options.headers || {});
    options.credentials = "same-origin";
    return fetch(url, options).then(function (r) {
      return r.text().then(function (html) { return {ok: r.ok, status: r.status, html: html, response: r}; });
    });
  }

  function progress(box, label, cancel) {
    var started = Date.now();
    box.textContent = "";
    var text = document.createElement("span");
    text.textContent = label + "…";
    var clock = document.createElement("span");
    clock.className = "clock";
    clock.setAttribute("aria-hidden", "true");
    var bar = document.createElement("span");
    bar.className = "bar";
    var stop = document.createElement("button");
    stop.type = "button";
    stop.textContent = "Cancel";
    stop.addEventListener("click", cancel);
    box.append(bar, text, clock, stop);
    box.hidden = false;
    var timer = setInterval(function () {
      clock.textContent = " " + Math.round((Date.now() - started) / 1000) + " s";
    }, 500);
    return function done() { clearInterval(timer); box.textContent = ""; box.hidden = true; };
  }

  function progressBox(form) {
    var box = form.nextElementSibling;
    if (box && box.classList.contains("progress")) return box;
    box = document.createElement("div");
    box.className = "progress";
    box.setAttribute("role", "status");
    box.setAttribute("aria-live", "polite");
    form.after(box);
    return box;
  }

  function submitAsync(form) {
    var target = document.querySelector(form.getAttribute("data-target"));
    if (!target) return form.submit();
    var button = form.querySelector("button[type=submit]");
    var abort = new AbortController();
    var done = progress(progressBox(form), form.getAttribute("data-progress") || "Working", function () {
      abort.abort();
    });
    if (button) button.disabled = true;
    var body = new URLSearchParams(new FormData(form));
    fetchFragment(form.action, {method: "POST", body: body, signal: abort.signal}).then(function (res) {
      var replaceWhole = target.id === "answer" || target.id === "audit";
      if (replaceWhole) { target.outerHTML = res.html; } else { target.innerHTML = res.html; }
      var where = res.response.headers.get("X-Provrag-Location");
      if (res.ok && where && where !== location.pathname) history.pushState({}, "", where);
      enhance(document);
    }).catch(function (err) {
      if (err.name !== "AbortError") target.textContent = "The request failed: " + err.message;
    }).finally(function () {
      done();
      if (button) button.disabled = false;
    });
  }

  function openEvidence(url, from) {
    if (!panel) { location.href = url; return; }
    opener = from || opener;
    panel.hidden = false;
    panel.setAttribute("aria-busy", "true");
    document.body.classList.add("with-evidence");
    fetchFragment(url).then(function (res) {
      panel.innerHTML = '<button type="button" class="close" aria-label="Close the evidence">×</button>' + res.html;
      panel.removeAttribute("aria-busy");
      loadPages(panel);
      var heading = panel.querySelector("h2");
      (heading || panel).focus();
      if (window.innerWidth < 900) panel.scrollIntoView({block: "start"});
    });
  }

  function closeEvidence() {
    if (!panel || panel.hidden) return;
    panel.hidden = true;
    panel.textContent = "";
    document.body.classList.remove("with-evidence");
    if (opener && document.contains(opener)) opener.focus();
  }

  function loadPages(root) {
    root.querySelectorAll("figure.page-image[data-src]:not([data-loaded])").forEach(function (fig) {
      fig.setAttribute("data-loaded", "");
      var img = fig.querySelector("img");
      var caption = fig.querySelector("figcaption");
      fetch(fig.getAttribute("data-src"), {credentials: "same-origin"}).then(function (r) {
        if (!r.ok) {
          return r.json().then(function (e) { throw new Error(e.error || ("HTTP " + r.status)); });
        }
        var found = r.headers.get("X-Provrag-Quote-Found") === "true";
        var match = r.headers.get("X-Provrag-Match");
        fig.setAttribute("data-found", String(found));
        if (fig.getAttribute("data-quote")) {
          caption.textContent = found ? "The quote is highlighted on this page" +
              (match && match !== "search" && match !== "normalised" ? " (" + match + " match)." : ".")
            : fig.getAttribute("data-ocr") ? "This page's text was read by OCR: it has no text layer to highlight the quote on."
            : "The quote is not on this page's text layer.";
        }
        return r.blob();
      }).then(function (blob) {
        img.src = URL.createObjectURL(blob);
      }).catch(function (err) {
        fig.setAttribute("data-error", "true");
        caption.textContent = "The page cannot be shown: " + err.message;
        img.remove();
      });
    });
  }

  function enhance(root) {
    loadPages(root);
    var pending = root.querySelector("[data-check-url] form.check:not([data-started])");
    if (pending) { pending.setAttribute("data-started", ""); submitAsync(pending); }
  }

  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (form.matches("form[data-async]")) { e.preventDefault(); submitAsync(form); }
  });

  document.addEventListener("click", function (e) {
    if (e.target.closest(".evidence-panel .close")) { closeEvidence(); return; }
    var link = e.target.closest("a[data-evidence]");
    if (!link || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    if (link.closest("#main .evidence-view")) return;   // the evidence page itself: plain navigation
    e.preventDefault();
    openEvidence(link.href, link.closest(".evidence-panel") ? null : link);
  });

  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || e.target.closest("input, textarea, select")) return;
    if (e.key === "Escape") { closeEvidence(); return; }
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    var view = panel && !panel.hidden ? panel : document.querySelector("#main .evidence-view");
    var link = view && view.querySelector('a[data-key="' + e.key + '"]');
    if (link) { e.preventDefault(); link.click(); }
  });

  window.addEventListener("popstate", function () { location.reload(); });
  enhance(document);
})();
