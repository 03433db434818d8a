import re,os,sys,subprocess
rev=sys.argv[1]; roots=sys.argv[2:]
def read(p):
    try: return subprocess.run(["git","show",f"{rev}:{p}"],capture_output=True,text=True,check=True).stdout
    except subprocess.CalledProcessError: return None
seen=set(); builtins={}
stack=list(roots)
while stack:
    p=stack.pop()
    if p in seen: continue
    seen.add(p); src=read(p)
    if src is None: continue
    for m in re.finditer(r'^(?:import|export)\s+(?!type\b)[^;]*?from\s+"([^"]+)"|^import\s+"([^"]+)"',src,re.M):
        spec=m.group(1) or m.group(2)
        if spec.startswith("."):
            q=os.path.normpath(os.path.join(os.path.dirname(p),spec)).replace(".js",".ts")
            stack.append(q)
        elif spec.startswith("node:"):
            builtins.setdefault(spec,[]).append(p)
print(rev, builtins)
