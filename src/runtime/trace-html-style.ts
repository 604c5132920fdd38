/** The stylesheet inlined into `rlm trace html` pages (no fonts or images to fetch). */

export const VIEWER_CSS = String.raw`
:root { --fg:#1d232b; --mute:#66707c; --line:#dde2e8; --bg:#f7f8fa; --card:#fff; --ok:#17803d; --bad:#c8312b;
  --warn:#a76200; --d0:#3f4a57; --d1:#2563c9; --d2:#7b3fc4; --d3:#0f8a80; --d4:#b5478a; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg); background:var(--bg); }
header { position:sticky; top:0; z-index:2; background:var(--card); border-bottom:1px solid var(--line); padding:8px 16px; }
main { padding:12px 16px 80px; }
h1 { font-size:15px; margin:0 8px 0 0; display:inline; }
.bar { display:flex; gap:8px; align-items:center; flex-wrap:wrap; }
.bar input[type=search] { flex:1; min-width:200px; padding:5px 8px; border:1px solid var(--line); border-radius:6px; font:inherit; }
button, select { font:inherit; padding:4px 9px; border:1px solid var(--line); border-radius:6px; background:#fff; cursor:pointer; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:10px 12px; margin:0 0 12px; }
.label { color:var(--mute); font-size:12px; text-transform:uppercase; letter-spacing:.04em; margin:0 0 2px; }
.qa { white-space:pre-wrap; word-break:break-word; margin:0 0 8px; }
.qa.answer { font-weight:600; }
.stats { display:flex; flex-wrap:wrap; gap:4px 18px; color:var(--mute); font-size:13px; }
.stats b { color:var(--fg); font-weight:600; }
.ok { color:var(--ok); } .bad { color:var(--bad); } .warn { color:var(--warn); }
details { margin:2px 0; }
details > summary { cursor:pointer; list-style:none; padding:3px 6px; border-radius:5px; white-space:nowrap; overflow:hidden; text-overflow:ellipsis; }
details > summary::-webkit-details-marker { display:none; }
details > summary::before { content:"\25B8"; display:inline-block; width:14px; color:var(--mute); }
details[open] > summary::before { content:"\25BE"; }
details > summary:hover { background:#eef1f5; }
.body { margin-left:14px; padding-left:10px; border-left:2px solid var(--line); }
.span > .body { border-left-color:var(--dc,var(--line)); }
.span.d0 { --dc:var(--d0); } .span.d1 { --dc:var(--d1); } .span.d2 { --dc:var(--d2); } .span.d3 { --dc:var(--d3); } .span.d4 { --dc:var(--d4); }
.badge { display:inline-block; font-size:11px; font-weight:600; color:#fff; background:var(--dc,var(--d0)); border-radius:4px; padding:0 5px; margin-right:6px; }
.meta { color:var(--mute); font-size:12.5px; margin-left:6px; }
.preview { color:var(--fg); margin-left:8px; }
pre { margin:4px 0 8px; padding:8px 10px; background:#fbfcfd; border:1px solid var(--line); border-radius:6px; white-space:pre-wrap; word-break:break-word; font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; max-height:480px; overflow:auto; }
pre.code { background:#f6f8fb; }
pre.prompt { max-height:150px; }
pre.out.err { border-color:#f1b6b3; background:#fff7f6; }
.block { margin:6px 0 10px; }
.block-head { font-size:12.5px; color:var(--mute); margin:6px 0 0; }
.tk-k { color:#a3208e; } .tk-s { color:#1a7f37; } .tk-n { color:#b35900; } .tk-c { color:#7d8792; font-style:italic; } .tk-f { color:#1f5fbf; font-weight:600; }
mark { background:#ffe066; color:inherit; border-radius:2px; }
.flash > summary, .block.flash { animation:flash 1.6s ease-out; }
@keyframes flash { from { background:#ffe066; } to { background:transparent; } }
#results { max-height:240px; overflow:auto; margin:6px 0 0; font-size:13px; }
#results:empty { display:none; }
.hit { padding:3px 6px; cursor:pointer; border-radius:5px; white-space:nowrap; overflow:hidden; text-overflow:ellipsis; }
.hit:hover { background:#eef1f5; }
.hit .where { color:var(--mute); margin-right:8px; }
.timeline { position:relative; overflow-y:auto; max-height:260px; border:1px solid var(--line); border-radius:6px; background:#fbfcfd; }
.tl-bar { position:absolute; height:8px; border-radius:2px; background:var(--dc); opacity:.85; cursor:pointer; min-width:2px; }
.tl-bar:hover { opacity:1; outline:1px solid #000; }
.tl-bar.d1 { --dc:var(--d1); } .tl-bar.d2 { --dc:var(--d2); } .tl-bar.d3 { --dc:var(--d3); } .tl-bar.d4 { --dc:var(--d4); } .tl-bar.cached { opacity:.35; }
.axis { display:flex; justify-content:space-between; color:var(--mute); font-size:11.5px; margin-top:2px; }
.msg-role { font-size:12px; color:var(--mute); margin-top:4px; }
`;
