# Diagnosis helpers for ACAS Xu (session 7, issue 7): ONNX reader (acas.py), a plain float64
# CROWN (crown.py), margin scan by PGD + sampling (margins.py NET:PROP ...), bound gap of random
# sub-boxes (gap2.py NET PROP), split-dimension probe of a dumped box (stuck.py). /usr/bin/python3.
import sys, re, numpy as np, torch
sys.path.insert(0, __import__('os').path.join(__import__('os').path.dirname(__import__('os').path.abspath(__file__)), '..'))
from milp_check_mlp import fields, varint
D='/work/shared/data/vnncomp2021/acasxu/'
def read_acas(path):
    graph=[v for f,_,v in fields(open(path,'rb').read()) if f==7][0]
    init={}; nodes=[]
    for f,_,v in fields(graph):
        if f==5:
            dims,name,raw,fl=[],None,None,None
            for g,tt,w in fields(v):
                if g==1 and tt==0: dims.append(w)
                elif g==1:
                    j=0
                    while j<len(w): d,j=varint(w,j); dims.append(d)
                elif g==8: name=w.decode()
                elif g==9: raw=w
                elif g==4 and tt==2: fl=np.frombuffer(w,dtype=np.float32)
                elif g==4 and tt==5: fl=np.frombuffer(w,dtype=np.float32) if fl is None else np.concatenate([fl,np.frombuffer(w,dtype=np.float32)])
            arr=np.frombuffer(raw,dtype=np.float32) if raw is not None else fl
            init[name]=arr.reshape(dims).astype(np.float64) if dims else arr.astype(np.float64)
        elif f==1:
            ins=[w.decode() for g,_,w in fields(v) if g==1]; op=[w.decode() for g,_,w in fields(v) if g==4][0]
            nodes.append((op,ins))
    sub=None; Ws=[]; Bs=[]
    for op,ins in nodes:
        if op=='Sub': sub=init[ins[1]]
        if op=='MatMul': Ws.append(init[ins[1]].T)
        if op=='Add': Bs.append(init[ins[1]])
    layers=[(torch.tensor(w),torch.tensor(b)) for w,b in zip(Ws,Bs)]
    return torch.tensor(sub).reshape(-1), layers
def read_box(prop):
    s=open(D+prop+'.vnnlib').read()
    lo=np.zeros(5); hi=np.zeros(5)
    for m in re.finditer(r"\(assert \(<= X_(\d+) ([-\d.eE+]+)\)\)", s): hi[int(m.group(1))]=float(m.group(2))
    for m in re.finditer(r"\(assert \(>= X_(\d+) ([-\d.eE+]+)\)\)", s): lo[int(m.group(1))]=float(m.group(2))
    return torch.tensor(lo), torch.tensor(hi)
def load(net):
    sub,layers=read_acas(D+f'ACASXU_run2a_{net}_batch_2000.onnx')
    def fwd(x):
        x=x-sub
        for i,(w,b) in enumerate(layers):
            x=x@w.T+b
            if i<len(layers)-1: x=x.clamp_min(0)
        return x
    return fwd, sub, layers
