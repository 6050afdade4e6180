# Joint Adam on simplex weights and slopes of one combined row lambda^T g on the boxes of open33_worst.csv: the
# best bound after 10, 20, 50, 100 steps (session 10; tried in alpha_conjunction_bound and not kept: see
# bench/RESULTS.md). /usr/bin/python3 lamalpha.py [BOXES.csv]
import sys, time, torch
sys.path.insert(0,__import__('os').path.dirname(__import__('os').path.abspath(__file__)))
from acas import *; from crown import *
torch.set_num_threads(1)
fwd,sub,layers=load('3_3'); W0,b0=layers[0]; L=[(W0,b0-W0@sub)]+layers[1:]
C=torch.zeros(4,5,dtype=torch.float64)
for j in range(4): C[j,j+1]=1; C[j,0]=-1
rows=[[float(v) for v in l.split(',')] for l in open(sys.argv[1] if len(sys.argv)>1 else 'open33_worst.csv') if not l.startswith('#')]
rows=sorted([r for r in rows if r[0]==1],key=lambda r:r[11])[:10]
def lam_alpha(lo,hi,bounds,rel,iters,lr=0.1):
    th=torch.zeros(1,4,dtype=torch.float64,requires_grad=True)
    alphas=[rel[j][0].unsqueeze(1).clone().requires_grad_(True) for j in range(len(rel))]
    opt=torch.optim.Adam(alphas+[th],lr=lr); best=-1e9; hist=[]
    for t in range(iters):
        lam=torch.softmax(th,1); c=lam@C
        lb,A=backward(L,len(L),c.unsqueeze(0),torch.zeros(1,1,dtype=torch.float64),rel,lo,hi,alphas)
        best=max(best,lb.item()); hist.append(best)
        opt.zero_grad(); (-lb.sum()).backward(); opt.step()
        with torch.no_grad():
            for a in alphas: a.clamp_(0,1)
    return hist
for r in rows:
    lo=torch.tensor(r[1:6],dtype=torch.float64)[None]; hi=torch.tensor(r[6:11],dtype=torch.float64)[None]
    bounds,rel=layer_bounds(L,lo,hi)
    h=lam_alpha(lo,hi,bounds,rel,100)
    print('score %.4f  lam-alpha @10 %.4f @20 %.4f @50 %.4f @100 %.4f'%(r[11],h[9],h[19],h[49],h[99]))
