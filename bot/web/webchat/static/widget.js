/* tuvan: the admissions chat as a floating button on the university's own site.

   <script src="https://bot.example/widget.js" async></script>

   Optional: data-lang="vi" | "en" (else the browser's language), data-position="left".
   The chat itself is the bot's page in an iframe (/?embed=1): nothing of the host page is read,
   and the host page cannot read the conversation. The host's origin must be listed in
   TUVAN_WEB__ALLOWED_ORIGINS, or the browser will refuse to show the frame. The launcher takes
   the university's colour and name (TUVAN_BRAND__*), put in below by the server.
*/
(function () {
  "use strict";
  var BRAND = {{brand}};
  var script = document.currentScript;
  if (!script || window.__tuvanWidget) return;
  window.__tuvanWidget = true;

  var base = new URL(script.src, location.href);
  var lang = script.getAttribute("data-lang");
  var left = script.getAttribute("data-position") === "left";
  var en = (lang || navigator.language || "vi").toLowerCase().indexOf("en") === 0;
  var name = en ? BRAND.name.en : BRAND.name.vi;
  var label = en
    ? { open: "Admissions chat", close: "Close the chat", frame: "Admissions assistant" }
    : { open: "Tư vấn tuyển sinh", close: "Đóng khung chat", frame: "Trợ lý tư vấn tuyển sinh" };
  label.open += " – " + name;
  label.frame += " – " + name;
  var src = new URL("/?embed=1", base);
  if (lang === "vi" || lang === "en") src.searchParams.set("lang", lang);

  var css =
    ":host { all: initial; }" +
    ".launch { position: fixed; bottom: 20px; SIDE: 20px; z-index: 2147483646; width: 56px;" +
    " height: 56px; border: 0; border-radius: 50%; background: " + BRAND.color + "; color: " +
    BRAND.ink + ";" +
    " font: 26px/56px system-ui, sans-serif; cursor: pointer; box-shadow: 0 4px 14px rgba(0,0,0,.25); }" +
    ".launch:focus-visible { outline: 3px solid #9ecbff; outline-offset: 2px; }" +
    ".panel { position: fixed; bottom: 88px; SIDE: 20px; z-index: 2147483647; width: 380px;" +
    " height: min(600px, calc(100vh - 110px)); border: 1px solid #d0d7de; border-radius: 12px;" +
    " overflow: hidden; background: #fff; box-shadow: 0 8px 30px rgba(0,0,0,.25); display: none; }" +
    ".panel.open { display: block; }" +
    "iframe { width: 100%; height: 100%; border: 0; display: block; }" +
    "@media (max-width: 480px) { .panel { left: 0; right: 0; bottom: 0; width: auto;" +
    " height: calc(100% - 84px); border-radius: 0; } }";

  function start() {
    var host = document.createElement("div");
    // A shadow root keeps the site's CSS off the widget and the widget's CSS off the site.
    var root = host.attachShadow ? host.attachShadow({ mode: "open" }) : host;
    var style = document.createElement("style");
    style.textContent = css.replace(/SIDE/g, left ? "left" : "right");
    var button = document.createElement("button");
    button.type = "button";
    button.className = "launch";
    button.textContent = "💬";
    button.title = label.open;
    button.setAttribute("aria-label", label.open);
    button.setAttribute("aria-expanded", "false");
    var panel = document.createElement("div");
    panel.className = "panel";
    var frame = null;

    button.addEventListener("click", function () {
      var open = !panel.classList.contains("open");
      if (open && !frame) {
        // Loaded on first open only: a visitor who never opens the chat costs nothing.
        frame = document.createElement("iframe");
        frame.src = src.href;
        frame.title = label.frame;
        panel.appendChild(frame);
      }
      panel.classList.toggle("open", open);
      // The chat asks for staff replies only while it can be seen: tell it.
      frame.contentWindow.postMessage({ tuvan: "panel", open: open }, src.origin);
      button.textContent = open ? "✕" : "💬";
      button.title = open ? label.close : label.open;
      button.setAttribute("aria-label", button.title);
      button.setAttribute("aria-expanded", open ? "true" : "false");
    });

    root.appendChild(style);
    root.appendChild(panel);
    root.appendChild(button);
    document.body.appendChild(host);
  }

  if (document.body) start();
  else document.addEventListener("DOMContentLoaded", start);
})();
