// Progressive enhancement only: every feature here also works without JavaScript
// (links, a Sort button, a plain search box). Text from the server is inserted
// with textContent, never as HTML.
(function () {
  "use strict";

  // Facet values are links with role="checkbox": Enter follows them natively;
  // Space, the checkbox key, should too.
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.key === " " && target.matches && target.matches('a[role="checkbox"]')) {
      event.preventDefault();
      target.click();
    }
  });

  // Sort applies at once; the Sort button stays for browsers without JavaScript.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
    var button = select.form.querySelector(".js-hide");
    if (button) { button.hidden = true; }
  });

  // The filters' disclosure button (shown on narrow screens only): the stylesheet hides
  // the filters while aria-expanded is "false", so flipping it is all there is to do.
  document.querySelectorAll("button[aria-controls].filters-toggle").forEach(function (button) {
    button.addEventListener("click", function () {
      var open = button.getAttribute("aria-expanded") === "true";
      button.setAttribute("aria-expanded", open ? "false" : "true");
    });
  });

  // Autocomplete: an ARIA combobox over /api/suggest.
  document.querySelectorAll("input[data-suggest]").forEach(function (input) {
    var list = document.getElementById(input.getAttribute("aria-controls"));
    var endpoint = input.getAttribute("data-suggest");
    var items = [];
    var active = -1;
    var timer = null;
    var seq = 0;

    function close() {
      list.hidden = true;
      list.textContent = "";
      items = [];
      active = -1;
      input.setAttribute("aria-expanded", "false");
      input.removeAttribute("aria-activedescendant");
    }

    function highlight(index) {
      items.forEach(function (li, i) { li.setAttribute("aria-selected", i === index ? "true" : "false"); });
      active = index;
      if (index >= 0) { input.setAttribute("aria-activedescendant", items[index].id); }
      else { input.removeAttribute("aria-activedescendant"); }
    }

    function show(suggestions) {
      close();
      if (!suggestions.length) { return; }
      suggestions.forEach(function (s, i) {
        var li = document.createElement("li");
        li.id = "suggestion-" + i;
        li.setAttribute("role", "option");
        li.setAttribute("aria-selected", "false");
        li.dataset.url = s.url;
        var kind = document.createElement("span");
        kind.className = "kind";
        kind.textContent = s.kind === "researcher" ? "Researcher" : "Work";
        var text = document.createElement("span");
        text.textContent = s.text;
        li.appendChild(kind);
        li.appendChild(text);
        li.addEventListener("mousedown", function (event) {
          event.preventDefault();  // keep focus; navigate on click
          window.location.href = s.url;
        });
        list.appendChild(li);
        items.push(li);
      });
      list.hidden = false;
      input.setAttribute("aria-expanded", "true");
    }

    function fetchSuggestions() {
      var text = input.value.trim();
      if (text.length < 2) { close(); return; }
      var mine = ++seq;
      fetch(endpoint + "?q=" + encodeURIComponent(text), { headers: { "Accept": "application/json" } })
        .then(function (r) { return r.ok ? r.json() : { suggestions: [] }; })
        .then(function (body) { if (mine === seq) { show(body.suggestions || []); } })
        .catch(function () { close(); });
    }

    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(fetchSuggestions, 150);
    });
    input.addEventListener("keydown", function (event) {
      if (list.hidden) { return; }
      if (event.key === "ArrowDown") {
        event.preventDefault();
        highlight((active + 1) % items.length);
      } else if (event.key === "ArrowUp") {
        event.preventDefault();
        highlight(active <= 0 ? items.length - 1 : active - 1);
      } else if (event.key === "Enter" && active >= 0) {
        event.preventDefault();
        window.location.href = items[active].dataset.url;
      } else if (event.key === "Escape") {
        close();
      }
    });
    input.addEventListener("blur", function () { setTimeout(close, 100); });
  });
})();
