# Counterexample search for 5_3 prop_2 (session 8): PGD on max_j (Y_j - Y_0) and on a smooth
# surrogate (tau logsumexp), many restarts, float64. /usr/bin/python3 search53.py [N] [tau]
import sys, torch
from acas import *
torch.set_num_threads(1)
N=int(sys.argv[1]) if len(sys.argv)>1 else 20000; tau=float(sys.argv[2]) if len(sys.argv)>2 else 0
fwd,sub,layers=load('5_3'); lo,hi=read_box('prop_2')
def m(y): return (y[:,1:]-y[:,:1]).max(1).values
torch.manual_seed(1)
x=(lo+(hi-lo)*torch.rand(N,5,dtype=torch.float64)).requires_grad_(True); step=(hi-lo)*0.1
best=1e9
for t in range(300):
    y=fwd(x); d=y[:,1:]-y[:,:1]
    v=(torch.logsumexp(d/tau,1)*tau) if tau>0 else d.max(1).values
    g,=torch.autograd.grad(v.sum(),x)
    with torch.no_grad():
        x-=step*g.sign(); x.copy_(torch.max(torch.min(x,hi),lo)); step*=0.985
        mm=m(fwd(x)); i=mm.argmin()
        if mm[i]<best: best=float(mm[i]); bx=x[i].clone()
print('N',N,'tau',tau,'best margin %.6g'%best,'at',repr(bx.numpy()))
with torch.no_grad():
    mm=m(fwd(x)); o=mm.argsort()[:10]
    for i in o: print('%.6g'%float(mm[i]), x[i].numpy().round(5))
