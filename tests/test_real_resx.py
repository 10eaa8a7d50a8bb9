""".NET resource files (`Resources.resx`, a WinForms form's) as Visual Studio writes them: string resources
translated with their format items kept; images, positions, designer entries and comments for translators kept."""
import pytest
from lxml import etree

from pipeline.documents import by_extension, translate_document
from stand_ins import recording, suffixed

RESX = b'''\xef\xbb\xbf<?xml version="1.0" encoding="utf-8"?>
<root>
  <!-- Microsoft ResX Schema -->
  <resheader name="resmimetype">
    <value>text/microsoft-resx</value>
  </resheader>
  <data name="Greeting" xml:space="preserve">
    <value>Hello {0}, you have {1:N0} new messages &amp; alerts</value>
    <comment>Shown on start</comment>
  </data>
  <data name="$this.Text" xml:space="preserve">
    <value>Settings window</value>
  </data>
  <data name="button1.Location" type="System.Drawing.Point, System.Drawing">
    <value>12, 34</value>
  </data>
  <data name="&gt;&gt;button1.Name" xml:space="preserve">
    <value>button1</value>
  </data>
  <data name="Aligned" xml:space="preserve">
    <value>Total: {0,-10} items</value>
  </data>
</root>
'''


def test_string_resources_are_translated_and_the_rest_is_kept():
    model, seen = recording(suffixed)
    out = translate_document(None, RESX, name="Resources.resx", translate=model)
    assert out == RESX.replace(b"Hello {0}, you have {1:N0} new messages &amp; alerts",
                               b"Hello-it {0}, you-it have-it {1:N0} new-it messages-it &amp; alerts-it") \
        .replace(b"Settings window", b"Settings-it window-it").replace(b"Total: {0,-10} items",
                                                                    b"Total-it: {0,-10} items-it")
    assert seen == ["Hello 70, you have 71 new messages & alerts", "Settings window", "Total: 70 items"]


def test_the_format_is_known_and_other_xml_is_a_one_line_error():
    assert by_extension(".resx").name == "resx"
    with pytest.raises(ValueError, match=r"^a\.resx: not a \.NET resource file: its root is <resources>, not "
                                         r"<root>$"):
        translate_document(None, b"<resources/>", name="a.resx", translate=suffixed)
    with pytest.raises(ValueError, match=r"^a\.resx: a \.NET resource file with a DOCTYPE"):
        translate_document(None, b'<!DOCTYPE root [<!ENTITY e "x">]><root><data name="a"><value>&e;</value></data>'
                                 b"</root>", name="a.resx", translate=suffixed)
    etree.fromstring(translate_document(None, RESX, name="Resources.resx", translate=lambda texts: [
        text + " <&> ]]>" for text in texts]))                     # what a model writes is escaped


def test_typed_strings_are_read_and_a_translation_that_would_break_the_file_is_not_written():
    resx = (b'<?xml version="1.0" encoding="utf-8"?>\r\n<!-- <root> in a comment -->\r\n<root>\r\n'
            b'  <data name="Typed" type="System.String, mscorlib"><value>Typed text here</value></data>\r\n'
            b'  <data name="Format"><value>{0:N2} items left</value></data>\r\n'
            b'  <data name="Control"><value>Hello world</value></data>\r\n</root>\r\n')
    out = translate_document(None, resx, name="a.resx", translate=lambda texts: [
        {"Typed text here": "Testo tipizzato", "70 items left": "70 elementi { rimasti",
         "Hello world": "Ciao\x0cmondo"}.get(text, text) for text in texts])
    assert out == resx.replace(b"Typed text here", b"Testo tipizzato")   # CR LF kept; the other two as written
