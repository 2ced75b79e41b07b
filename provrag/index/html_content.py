"""HTML before docling reads it: the page's own content, its text joined as a browser joins it.

Why. Documentation sites wrap every page in site chrome that a browser shows beside the page and
that says nothing of its subject: Sphinx's sidebar (the page's table of contents, "Previous
topic", "Quick search") and its bars of related links, DocBook's Prev / Up / Next tables. Indexed,
it made the first unit of every page of the Python manual a list of links ("timeit - Measure
execution time … - Timer.repeat() - Timer.print_exc()"), which retrieval ranked and the reader
quoted as an answer. And docling's HTML backend reads each inline element (a link, a `<code>`,
each highlighted token of a `<pre>`) as a text item of its own, and its text export joins the
items with spaces: the page's "json.dumps(['foo'])" became "json . dumps ([ 'foo' ])", and
"a member (Applying to Become a Member);" became "a member ( Applying to Become a Member );".
A quote must be text the user finds on the page.

What is done, with lxml (docling's parser and ours already):
1. chrome is removed wherever it stands: `<nav>`, elements whose ARIA role is navigation, search,
   banner or contentinfo (the landmarks HTML gives a site's navigation, search box, header and
   footer), and the chrome classes of the generators behind most HTML manuals — the permalink
   anchor after each heading ("headerlink", the ¶ of Sphinx and MkDocs) and DocBook XSL's
   "navheader" / "navfooter" tables;
2. when the page marks exactly one main content (`<main>` or role="main"), it alone is kept;
3. inline elements are unwrapped: their text stays where it stood, joined to its neighbours as it
   is rendered, so docling reads each paragraph and each `<pre>` as one text;
4. a definition list whose definitions hold lists of their own is laid out as a nested list
   (_as_nested_list), or as blocks when its definitions hold tables or code (_as_blocks): docling
   dropped the text of such a definition — the description of every class of the Python manual,
   whose methods are listed inside it.
A page with no text left is read as it came (nothing is lost for a page that is all links).
Hand-written rather than a boilerplate remover (trafilatura, readability): those score blocks by
text density, so whether a manual's one-line definition or code sample stays would depend on a
score; here only what the page itself marks as chrome goes.
"""
from __future__ import annotations

READING = "2"   # part of an HTML file's parse-cache key (parse.result_options): bump when the output changes
CHROME_ROLES = ("navigation", "search", "banner", "contentinfo")
CHROME_CLASSES = ("headerlink", "navheader", "navfooter")
# phrasing elements that docling would read as text items of their own (HTML's inline content);
# <br>, <img> and form controls stay: they are not runs of text
INLINE = ("a", "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "del", "dfn", "em", "font", "i",
          "ins", "kbd", "mark", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "time",
          "tt", "u", "var")


def _class_test(name: str) -> str:
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


CHROME_XPATH = " | ".join(["//nav", *(f"//*[@role='{r}']" for r in CHROME_ROLES),
                           *(f"//*[{_class_test(c)}]" for c in CHROME_CLASSES)])
MAIN_XPATH = "//main | //*[@role='main']"


def page_content(data: bytes) -> bytes | None:
    """The HTML docling should read, or None when the page has no text in its body (lxml cannot
    read it, or it has no body, or nothing but markup). Otherwise never raises: a page that would
    be left without text, or whose tree this code did not foresee, comes back as it came."""
    try:
        import lxml.html
        from bs4.dammit import UnicodeDammit

        # the page's encoding as docling's BeautifulSoup finds it (its declarations, else a sniff):
        # left to itself, lxml reads a page that declares none as Latin-1 ("GermÃ¡n" for the UTF-8
        # "Germán") and one declared only in an XHTML page's XML prologue as UTF-8
        encoding = UnicodeDammit(data, is_html=True).original_encoding
        root = lxml.html.document_fromstring(data, parser=lxml.html.HTMLParser(encoding=encoding))
    except Exception:  # lxml raises ParserError on a document with no elements at all
        return None
    body = root.find("body")
    if body is None or not body.text_content().strip():
        return None
    try:
        _clean(root, body)
    except Exception:  # read as it came, not lost
        return data
    if not body.text_content().strip():
        return data
    _declare_utf8(root)
    return lxml.html.tostring(root, encoding="utf-8", method="html", doctype="<!DOCTYPE html>")


def _clean(root, body) -> None:
    """Steps 1-4 of the module docstring, in place."""
    import lxml.etree

    chrome = [el for el in root.xpath(CHROME_XPATH) if el is not body and el is not root]
    inside = set(chrome)   # lxml keeps one proxy per element while it is referenced: identity holds
    for el in chrome:
        if not any(a in inside for a in el.iterancestors()):   # chrome inside chrome goes with it
            el.drop_tree()   # keeps the tail text that followed the element
    marks = root.xpath(MAIN_XPATH)
    kept = set(marks)
    mains = [m for m in marks if not any(a in kept for a in m.iterancestors())]
    if len(mains) == 1 and mains[0] is not body and mains[0].text_content().strip():
        main = mains[0]
        main.tail = None
        for child in list(body):
            body.remove(child)
        body.text = None
        body.append(main)
    lxml.etree.strip_tags(body, *INLINE)
    for dl in list(body.iter("dl")):
        definitions = list(dl.iterchildren("dd"))
        if any(dd.find(".//dl") is not None for dd in definitions):
            if any(dd.find(f".//{tag}") is not None for dd in definitions for tag in ("table", "pre")):
                _as_blocks(dl)
            else:
                _as_nested_list(dl)


def _declare_utf8(root) -> None:
    """The page is written back as UTF-8 whatever it came in: its own charset declarations go and
    one for UTF-8 leads its head, so docling decodes what lxml decoded."""
    import lxml.html

    for meta in root.xpath("//meta[@charset] | //meta[translate(@http-equiv, 'CONTENT-YP', 'content-yp')"
                           " = 'content-type']"):
        meta.drop_tree()
    head = root.find("head")
    if head is None:
        head = lxml.html.Element("head")
        root.insert(0, head)
    head.insert(0, lxml.html.Element("meta", charset="utf-8"))


def _as_blocks(dl) -> None:
    """A definition list whose definitions hold lists of their own, read as blocks: docling drops
    the paragraphs of a <dd> that holds a <dl> (a class's description in the Python manual, whose
    methods are listed inside it: ~700 words of json.html were missing). The terms
    become paragraphs and the definitions divisions, as a browser lays them out; the inner lists
    stay lists, and a list whose definitions hold only text stays one (docling reads it whole,
    each term with its definition)."""
    dl.tag = "div"
    for item in dl:
        if item.tag == "dt":
            item.tag = "p"
        elif item.tag == "dd":
            item.tag = "div"


def _as_nested_list(dl) -> None:
    """A definition list whose definitions hold lists of their own (and no table or code), read as
    a nested list: each term an item, its definition a list nested under it, as docling writes any
    definition list ("- term" / "    - definition", what text/definitions.py reads as the term's
    entry). The runs of text between a definition's inner lists are items of their own, and each
    inner list stays a list in an item of its own: docling joins an item's paragraphs into one line
    and would move the text after an inner list before it. As blocks, PostgreSQL's SSL settings
    (runtime-config-connection: ssl_ciphers lists what its default means) lost their terms, and
    ssl_ciphers' "The default value is HIGH:MEDIUM:+3DES:!aNULL." was read under no setting. Tables
    and code are not kept in place inside an item's text by docling: such lists stay blocks."""
    import lxml.html

    dl.tag = "ul"
    term = None
    for item in list(dl):
        if item.tag == "dt":
            item.tag, term = "li", item
        elif item.tag == "dd":
            if term is None:                  # a definition with no term before it: an item of its own
                term = lxml.html.Element("li")
                item.addprevious(term)
            nested = lxml.html.Element("ul")
            term.append(nested)
            run = lxml.html.Element("li")
            run.text = item.text
            for child in list(item):
                if child.tag == "dl" or child.find(".//dl") is not None:   # DocBook wraps it in a <div>
                    _kept_item(nested, run)
                    holder = lxml.html.Element("li")
                    tail, child.tail = child.tail, None
                    holder.append(child)
                    nested.append(holder)
                    run = lxml.html.Element("li")
                    run.text = tail
                else:
                    run.append(child)
            _kept_item(nested, run)
            dl.remove(item)


def _kept_item(nested, run) -> None:
    """`run` appended to `nested` unless it holds nothing."""
    if len(run) or (run.text or "").strip():
        nested.append(run)
